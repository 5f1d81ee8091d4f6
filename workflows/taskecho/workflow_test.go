package taskecho

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

func queueOp(op string) queueop.Op {
	return queueop.Op{OpID: "op", ProjectID: "p", QueueID: "q", Operation: op, Actor: "admin", At: time.Unix(0, 0).UTC()}
}

// An operation runs as TaskEchoRunQueueOp calls, each continuing from the progress the previous
// one returned, until one reports the operation finished; a failed call is retried.
func TestQueueOperationRunsInCalls(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *taskechoact.Activities
	op := queueOp(queueop.Reset)
	env.OnActivity(a.TaskEchoRunQueueOp, mock.Anything, taskechoact.QueueOpRun{Op: op}).
		Return(taskechoact.QueueOpRunResult{Changed: 10000, Batches: 20, NextID: "id10000"}, nil).Once()
	env.OnActivity(a.TaskEchoRunQueueOp, mock.Anything, taskechoact.QueueOpRun{Op: op, AfterID: "id10000", Changed: 10000, Batches: 20}).
		Return(taskechoact.QueueOpRunResult{}, errors.New("mongo down")).Once()
	env.OnActivity(a.TaskEchoRunQueueOp, mock.Anything, taskechoact.QueueOpRun{Op: op, AfterID: "id10000", Changed: 10000, Batches: 20}).
		Return(taskechoact.QueueOpRunResult{Changed: 10020, Batches: 22, NextID: "id10020", Finished: true}, nil).Once()
	env.ExecuteWorkflow(QueueOperationWorkflow, QueueOpInput{Op: op})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res QueueOpResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Changed != 10020 || res.Batches != 22 {
		t.Fatalf("result %+v (%v)", res, err)
	}
	env.AssertExpectations(t)
}

func TestQueueOperationRejectsUnknownOperation(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(QueueOperationWorkflow, QueueOpInput{Op: queueOp("drop-table")})
	var ae *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &ae) || ae.Type() != "InvalidOperation" {
		t.Fatalf("error %v, want a non-retryable InvalidOperation", err)
	}
}

func TestSweeperRunsEveryStep(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *taskechoact.Activities
	env.OnActivity(a.TaskEchoReleaseExpiredLeases, mock.Anything).Return(taskechoact.SweepResult{Overdue: 4, Released: 4}, nil).Once()
	env.OnActivity(a.TaskEchoExpireTasks, mock.Anything).Return(2, nil).Once()
	env.OnActivity(a.TaskEchoCheckAlerts, mock.Anything).Return(taskechoact.SweepResult{AlertBreaches: []string{"pull_timeouts_high"}}, nil).Once()
	env.ExecuteWorkflow(PullLeaseSweeperWorkflow)
	var res taskechoact.SweepResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Released != 4 || res.Expired != 2 || len(res.AlertBreaches) != 1 {
		t.Fatalf("sweep %+v", res)
	}
}
