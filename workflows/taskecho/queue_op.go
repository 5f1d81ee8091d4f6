package taskecho

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// QueueOpResult is what a queue operation changed.
type QueueOpResult struct {
	Changed int `json:"changed"`
	Batches int `json:"batches"`
}

// QueryState is the query name exposing a running queue operation's progress.
const QueryState = "state"

// queueOpBatchesPerRun bounds the history of one run; longer operations continue as new with
// their cursor and counts.
const queueOpBatchesPerRun = 200

// QueueOpInput is the workflow input; AfterID and Done carry progress across continue-as-new.
type QueueOpInput struct {
	Op      queueop.Op    `json:"op"`
	AfterID string        `json:"after_id"`
	Done    QueueOpResult `json:"done"`
}

// runQueueOpHeartbeat is how long a TaskEchoRunQueueOp call may go without a heartbeat (one per
// batch) before it is retried from its last one: the time one batch had as an activity of its own.
const runQueueOpHeartbeat = 2 * time.Minute

// QueueOperationWorkflow applies one queue operation in batches of tasks (idempotent, with a
// forward-only cursor), then stamps the queue's last_reset_at/last_operation and writes the audit
// row. It runs as TaskEchoRunQueueOp calls, each applying up to taskechoact.QueueOpBatchesPerCall
// batches and, once the queue is exhausted, the finish, so an operation on up to 10,000 tasks
// costs two Temporal actions (the start and one activity). A worker crash mid-way resumes at the
// last finished batch (the call's heartbeat).
func QueueOperationWorkflow(ctx workflow.Context, in QueueOpInput) (QueueOpResult, error) {
	if !queueop.Valid(in.Op.Operation) {
		return in.Done, temporal.NewNonRetryableApplicationError("unknown queue operation "+in.Op.Operation, "InvalidOperation", nil)
	}
	state := in.Done
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (QueueOpResult, error) { return state, nil }); err != nil {
		return state, err
	}
	return runInCalls(ctx, in, &state)
}

// runInCalls runs the operation as TaskEchoRunQueueOp calls until one reports it finished.
// state is the progress the query handler reports.
func runInCalls(ctx workflow.Context, in QueueOpInput, state *QueueOpResult) (QueueOpResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: taskechoact.QueueOpBatchesPerCall * runQueueOpHeartbeat,
		HeartbeatTimeout:    runQueueOpHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
		Summary:             in.Op.Operation + " of queue " + in.Op.QueueID,
	})
	after := in.AfterID
	for call := 0; ; call++ {
		if call == queueOpBatchesPerRun {
			return *state, workflow.NewContinueAsNewError(ctx, QueueOperationWorkflow, QueueOpInput{Op: in.Op, AfterID: after, Done: *state})
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s of queue %s: %d tasks changed in %d batches; the next up to %d batches run",
			in.Op.Operation, in.Op.QueueID, state.Changed, state.Batches, taskechoact.QueueOpBatchesPerCall))
		var r taskechoact.QueueOpRunResult
		run := taskechoact.QueueOpRun{Op: in.Op, AfterID: after, Changed: state.Changed, Batches: state.Batches}
		if err := workflow.ExecuteActivity(ctx, acts.TaskEchoRunQueueOp, run).Get(ctx, &r); err != nil {
			return *state, err
		}
		state.Changed, state.Batches, after = r.Changed, r.Batches, r.NextID
		if r.Finished {
			break
		}
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s of queue %s done: %d tasks changed", in.Op.Operation, in.Op.QueueID, state.Changed))
	return *state, nil
}
