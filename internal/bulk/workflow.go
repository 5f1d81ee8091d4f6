package bulk

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/searchattr"
)

// QueryProgress returns an operation's Progress, also of a closed run.
const QueryProgress = "progress"

// BatchesPerRun bounds one run's history; the operation continues as new after it.
const BatchesPerRun = 200

// BatchOptions are a page activity's: retried a few times (every task's operation in it is
// idempotent, so a repeated page does nothing twice), then the operation fails. A redrive page
// waits for each run's admission, hence the long timeout.
var BatchOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Minute,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10},
}

// Run is an operation's workflow: it works the tasks of in.Filter at a bounded rate, one page
// activity (PageRequest in, Page out) per in.Interval, paging by task id from in.Cursor. It
// answers QueryProgress while it runs, sets TaskloomStatus to ended when done and returns the
// progress with the per-task outcomes. After BatchesPerRun pages the operation continues as new
// (the same workflow type) with the cursor and the progress so far.
func Run[F, P any, O Outcome](ctx workflow.Context, in Input[F, P, O], activity any, ended string) (*Progress[F, O], error) {
	if in.ID == "" || in.BatchSize <= 0 || in.Interval <= 0 {
		return nil, temporal.NewNonRetryableApplicationError("bulk input needs an id, a batch size and an interval", "InvalidInput", nil)
	}
	p := &in.Progress
	p.ID, p.Op, p.Requested = in.ID, in.Op, in.Requested
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress[F, O], error) { return *p, nil }); err != nil {
		return nil, fmt.Errorf("register %s query: %w", QueryProgress, err)
	}
	actx := workflow.WithActivityOptions(ctx, BatchOptions)
	for n := 0; ; n++ {
		if n == BatchesPerRun {
			return nil, workflow.NewContinueAsNewError(ctx, workflow.GetInfo(ctx).WorkflowType.Name, in)
		}
		var page Page[O]
		err := workflow.ExecuteActivity(actx, activity, PageRequest[F, P]{Op: in.Op, ID: in.ID, Filter: in.Filter,
			After: in.Cursor, Limit: in.BatchSize, Params: in.Params}).Get(ctx, &page)
		if err != nil {
			return nil, err
		}
		p.add(page.Outcomes)
		in.Cursor = page.Last
		if page.Done {
			break
		}
		if err := workflow.Sleep(ctx, in.Interval); err != nil {
			return nil, err
		}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(ended)); err != nil {
		workflow.GetLogger(ctx).Warn("upsert TaskloomStatus failed", "err", err)
	}
	p.Finished = true
	return p, nil
}
