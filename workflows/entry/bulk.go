package entry

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/entry"
)

// QueryBulkProgress returns a bulk resume/drop's BulkProgress, also of a closed run.
const QueryBulkProgress = "progress"

// Bulk pacing defaults: BatchSize tasks per batch, one batch per Interval.
const (
	DefaultBulkBatchSize = 10
	DefaultBulkInterval  = time.Second
	// MaxBulkOutcomes bounds the per-task outcomes a bulk operation keeps; the counters cover
	// every task.
	MaxBulkOutcomes = 1000
)

// BulkInput starts (or continues) a bulk resume or drop.
type BulkInput struct {
	// Op is entry.BulkResume or entry.BulkDrop; ID the operation's id (BulkWorkflowID).
	Op string
	ID string
	// Requested is the filter as the caller sent it; Filter the one applied (not after the start).
	Requested entry.BulkFilter
	Filter    entry.BulkFilter
	Payload   entry.SignalPayload
	BatchSize int
	Interval  time.Duration
	// Progress and Cursor carry the operation over continue-as-new; zero on the first run.
	Progress BulkProgress
	Cursor   string
}

// BulkProgress is what a bulk operation has done so far (the progress query, and its result).
type BulkProgress struct {
	ID string
	Op string
	// Total is the dry-run count when the operation started.
	Total    int64
	Done     int
	Applied  int
	Skipped  int
	Errors   int
	Finished bool
	// Outcomes lists each task's outcome, at most MaxBulkOutcomes of them.
	Outcomes  []entry.BulkOutcome
	Requested entry.BulkFilter
}

func (p *BulkProgress) add(outs []entry.BulkOutcome) {
	for _, o := range outs {
		p.Done++
		switch o.Outcome {
		case entry.OutcomeResumed, entry.OutcomeDropped:
			p.Applied++
		case entry.OutcomeSkipped:
			p.Skipped++
		default:
			p.Errors++
		}
		if len(p.Outcomes) < MaxBulkOutcomes {
			p.Outcomes = append(p.Outcomes, o)
		}
	}
}

// BulkWorkflowID is the workflow ID of bulk operation id of kind op.
func BulkWorkflowID(op, id string) string { return "entry-bulk-" + op + ":" + id }

// EntryBulkWorkflow resumes or drops the suspended tasks of a filter at a bounded rate: one
// batch activity (EntryBulkBatch) per Interval, paging by task id, each task through the
// single-task path (a task no longer suspended is skipped, so a repeated batch does nothing
// twice). It answers QueryBulkProgress and returns the progress with the per-task outcomes; a
// large operation continues as new every bulk.BatchesPerRun batches.
func EntryBulkWorkflow(ctx workflow.Context, in BulkInput) (*BulkProgress, error) {
	if in.ID == "" || in.BatchSize <= 0 || in.Interval <= 0 || (in.Op != entry.BulkResume && in.Op != entry.BulkDrop) {
		return nil, temporal.NewNonRetryableApplicationError("bulk input needs an op, an id, a batch size and an interval", "InvalidInput", nil)
	}
	p := &in.Progress
	p.ID, p.Op, p.Requested = in.ID, in.Op, in.Requested
	if err := workflow.SetQueryHandler(ctx, QueryBulkProgress, func() (BulkProgress, error) { return *p, nil }); err != nil {
		return nil, fmt.Errorf("register %s query: %w", QueryBulkProgress, err)
	}
	actx := workflow.WithActivityOptions(ctx, bulk.BatchOptions)
	var a *entryact.Activities
	err := bulk.Run(ctx, &in.Cursor, in.Interval, func(ctx workflow.Context, after string) (string, bool, error) {
		var res entry.BulkBatchResult
		if err := workflow.ExecuteActivity(actx, a.EntryBulkBatch, entry.BulkBatchRequest{Op: in.Op, Filter: in.Filter,
			After: after, Limit: in.BatchSize, Payload: in.Payload}).Get(ctx, &res); err != nil {
			return "", false, err
		}
		p.add(res.Outcomes)
		return res.Last, res.Done, nil
	}, func() error { return workflow.NewContinueAsNewError(ctx, EntryBulkWorkflow, in) }, entry.StatusCompleted)
	if err != nil {
		return nil, err
	}
	p.Finished = true
	return p, nil
}
