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

// QueueOperationWorkflow applies one queue operation in batches of tasks (each an idempotent
// activity with a forward-only cursor), then stamps the queue's last_reset_at/last_operation and
// writes the audit row. A worker crash mid-way resumes at the last finished batch.
func QueueOperationWorkflow(ctx workflow.Context, in QueueOpInput) (QueueOpResult, error) {
	if !queueop.Valid(in.Op.Operation) {
		return in.Done, temporal.NewNonRetryableApplicationError("unknown queue operation "+in.Op.Operation, "InvalidOperation", nil)
	}
	state := in.Done
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (QueueOpResult, error) { return state, nil }); err != nil {
		return state, err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
		Summary:             in.Op.Operation + " of queue " + in.Op.QueueID,
	})
	a := activitiesFor(workflow.GetVersion(ctx, versionPrefixedNames, workflow.DefaultVersion, 1))
	after := in.AfterID
	for batch := 0; ; batch++ {
		if batch == queueOpBatchesPerRun {
			return state, workflow.NewContinueAsNewError(ctx, QueueOperationWorkflow, QueueOpInput{Op: in.Op, AfterID: after, Done: state})
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s of queue %s: %d tasks changed in %d batches; batch %d runs",
			in.Op.Operation, in.Op.QueueID, state.Changed, state.Batches, state.Batches+1))
		var r taskechoact.QueueOpBatchResult
		if err := workflow.ExecuteActivity(ctx, a.applyQueueOpBatch, taskechoact.QueueOpBatch{Op: in.Op, AfterID: after}).Get(ctx, &r); err != nil {
			return state, err
		}
		state.Changed += r.Changed
		state.Batches++
		if r.NextID == "" {
			break
		}
		after = r.NextID
	}
	if err := workflow.ExecuteActivity(ctx, a.finishQueueOp, in.Op, state.Changed).Get(ctx, nil); err != nil {
		return state, err
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s of queue %s done: %d tasks changed", in.Op.Operation, in.Op.QueueID, state.Changed))
	return state, nil
}
