package pipeline

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// KindRedriveBulk is the TaskloomKind search attribute value of bulk redrive workflows.
const KindRedriveBulk = searchattr.KindPipelineRedrive

// QueryBulkProgress returns a bulk redrive's BulkProgress, also of a closed run.
const QueryBulkProgress = "progress"

// Bulk redrive pacing defaults: BatchSize tasks per batch, one batch per Interval.
const (
	DefaultBulkBatchSize = 10
	DefaultBulkInterval  = time.Second
	// MaxBulkOutcomes bounds the per-task outcomes a bulk redrive keeps (in its query answer, its
	// result and its continue-as-new input); the counters cover every task.
	MaxBulkOutcomes = 1000
)

// BulkInput starts (or continues) a bulk redrive.
type BulkInput struct {
	// ID is the operation's id (BulkWorkflowID names its workflow): from the Idempotency-Key, so a
	// repeated request finds the same operation.
	ID string
	// Requested is the filter as the caller sent it; Filter is the one applied: Requested within
	// the redrive window and not after the operation's start.
	Requested pipeline.RedriveFilter
	Filter    pipeline.RedriveFilter
	BatchSize int
	Interval  time.Duration
	// Progress and Cursor carry the operation over continue-as-new; zero on the first run.
	Progress BulkProgress
	Cursor   string
}

// BulkProgress is what a bulk redrive has done so far (the progress query, and its result).
type BulkProgress struct {
	ID string
	// Total is the dry-run count when the operation started; tasks that fail again while it runs
	// are not added.
	Total    int64
	Done     int
	Redriven int
	Skipped  int
	Errors   int
	Finished bool
	// Outcomes lists each task's outcome, at most MaxBulkOutcomes of them.
	Outcomes  []pipeline.RedriveOutcome
	Requested pipeline.RedriveFilter
}

func (p *BulkProgress) add(outs []pipeline.RedriveOutcome) {
	for _, o := range outs {
		p.Done++
		switch o.Outcome {
		case pipeline.OutcomeRedriven:
			p.Redriven++
		case pipeline.OutcomeSkipped:
			p.Skipped++
		default:
			p.Errors++
		}
		if len(p.Outcomes) < MaxBulkOutcomes {
			p.Outcomes = append(p.Outcomes, o)
		}
	}
}

// BulkWorkflowID is the workflow ID of bulk redrive id.
func BulkWorkflowID(id string) string { return "pipeline-redrive-bulk:" + id }

// PipelineRedriveBulkWorkflow redrives the failed tasks of a filter at a bounded rate: one batch
// activity (PipelineRedriveBatch) per Interval, paging by task id, each task redriven under the
// operation's redrive id so that a repeated batch redrives nothing twice. It answers
// QueryBulkProgress while it runs and returns the progress with the per-task outcomes; a large
// operation continues as new every bulk.BatchesPerRun batches.
func PipelineRedriveBulkWorkflow(ctx workflow.Context, in BulkInput) (*BulkProgress, error) {
	if in.ID == "" || in.BatchSize <= 0 || in.Interval <= 0 {
		return nil, temporal.NewNonRetryableApplicationError("bulk redrive input needs an id, a batch size and an interval", "InvalidInput", nil)
	}
	p := &in.Progress
	p.ID, p.Requested = in.ID, in.Requested
	if err := workflow.SetQueryHandler(ctx, QueryBulkProgress, func() (BulkProgress, error) { return *p, nil }); err != nil {
		return nil, fmt.Errorf("register %s query: %w", QueryBulkProgress, err)
	}
	// A batch asks for up to BatchSize redrives, each waiting for its run's admission.
	actx := workflow.WithActivityOptions(ctx, bulk.BatchOptions)
	var a *pipelineact.Activities
	err := bulk.Run(ctx, &in.Cursor, in.Interval, func(ctx workflow.Context, after string) (string, bool, error) {
		var res pipeline.RedriveBatchResult
		if err := workflow.ExecuteActivity(actx, a.PipelineRedriveBatch, pipeline.RedriveBatchRequest{BulkID: in.ID,
			Filter: in.Filter, After: after, Limit: in.BatchSize}).Get(ctx, &res); err != nil {
			return "", false, err
		}
		p.add(res.Outcomes)
		return res.Last, res.Done, nil
	}, func() error { return workflow.NewContinueAsNewError(ctx, PipelineRedriveBulkWorkflow, in) }, pipeline.StatusSuccess)
	if err != nil {
		return nil, err
	}
	p.Finished = true
	return p, nil
}
