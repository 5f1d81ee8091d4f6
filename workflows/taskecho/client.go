package taskecho

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/schedule"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// Client-side helpers (API, worker start-up): not workflow code.

// Register registers the task server's workflows and activities on w. Under Worker Versioning a
// queue operation ends within a deploy (Pinned); the sweeper, which a schedule starts, moves to the
// current build (AutoUpgrade).
func Register(w sdkworker.Registry, acts *taskechoact.Activities) {
	w.RegisterWorkflowWithOptions(PullLeaseSweeperWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterWorkflowWithOptions(QueueOperationWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterActivity(acts)
}

// QueueOpWorkflowID is deterministic per queue and operation: a double click while an operation
// runs joins it instead of starting a second one.
func QueueOpWorkflowID(projectID, queueID, operation string) string {
	return "echo-queueop:" + projectID + ":" + queueID + ":" + operation
}

// QueueOpRun is a started (or joined) queue operation.
type QueueOpRun struct {
	OpID     string // workflow id + "/" + run id
	Finished bool
	Result   QueueOpResult
}

// StartQueueOp starts the operation's workflow (or joins the running one) and waits up to wait
// for it to finish.
func StartQueueOp(ctx context.Context, c client.Client, taskQueue string, op queueop.Op, wait time.Duration) (*QueueOpRun, error) {
	id := QueueOpWorkflowID(op.ProjectID, op.QueueID, op.Operation)
	opts := client.StartWorkflowOptions{
		ID: id, TaskQueue: taskQueue,
		StaticSummary: explain.Summary("echo queue "+op.Operation, "project "+op.ProjectID, "queue "+op.QueueID),
		StaticDetails: explain.Details(fmt.Sprintf("Applies %s to the tasks of queue `%s` of project `%s` in batches, then "+
			"stamps the queue and writes the audit row. Its current details count the tasks changed so far.",
			op.Operation, op.QueueID, op.ProjectID), explain.Link{Name: "Console", Path: "/ui/projects/" + op.ProjectID + "/queues/" + op.QueueID}),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Key.ValueSet(op.ProjectID+"/"+op.QueueID)),
	}
	run, err := c.ExecuteWorkflow(ctx, opts, QueueOperationWorkflow, QueueOpInput{Op: op})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	out := &QueueOpRun{OpID: id + "/" + run.GetRunID()}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err = run.Get(wctx, &out.Result)
	switch {
	case err == nil:
		out.Finished = true
	case ctx.Err() == nil && waitExpired(err, wctx):
		// still running: the caller answers with the operation id
	default:
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return out, nil
}

// waitExpired tells a wait that ran out of time from a real failure. The frontend may answer the
// long poll with its own DeadlineExceeded a moment before wctx itself expires (the deadline is
// propagated over gRPC), so the service error counts as "ran out" too.
func waitExpired(err error, wctx context.Context) bool {
	var dl *serviceerror.DeadlineExceeded
	return wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &dl)
}

// sweeperRunTimeout bounds one sweeper run.
const sweeperRunTimeout = 15 * time.Minute

// ScheduleOptions lists the echo schedules for `starter schedules apply`: the PullLeaseSweeper
// every ECHO_SWEEP_INTERVAL, overlaps skipped. Its run timeout keeps a run nobody picks up
// (e.g. left on a task queue no worker polls any more) from blocking the schedule forever.
func ScheduleOptions(cfg *config.Config) []client.ScheduleOptions {
	return []client.ScheduleOptions{schedule.Explained(schedule.Every(SweeperScheduleID, cfg.Echo.SweepInterval, Kind,
		cfg.Temporal.TaskQueue, sweeperRunTimeout, PullLeaseSweeperWorkflow),
		explain.Summary("echo lease sweep", "every "+cfg.Echo.SweepInterval.String()),
		explain.Details("Releases pull leases past pull_timeout, expires tasks past expires_at, and evaluates the alert "+
			"thresholds.", explain.Link{Name: "Console", Path: "/ui/"}))}
}
