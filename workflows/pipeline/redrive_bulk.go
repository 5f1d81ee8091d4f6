package pipeline

import (
	"context"
	"time"

	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// BulkInput starts (or continues) a bulk redrive; a redrive has no Params.
type BulkInput = bulk.Input[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome]

// BulkProgress is what a bulk redrive has done so far.
type BulkProgress = bulk.Progress[pipeline.RedriveFilter, pipeline.RedriveOutcome]

// BulkRedrive is the pipeline's bulk operation: redrive every failed task of a filter.
var BulkRedrive = bulk.Op{Name: "redrive", Noun: "bulk redrive", ID: "pipeline-redrive-bulk", Workflow: PipelineRedriveBulkWorkflow,
	Kind: searchattr.KindPipelineRedrive, Running: pipeline.StatusProcessing}

// RedriveCount counts the failed tasks a filter selects and lists up to sample of their ids
// (pipelinedb.Store.CountRedrivable).
type RedriveCount func(ctx context.Context, f pipeline.RedriveFilter, sample int64) (int64, []string, error)

// BulkRedrivePlan is BulkRedrive as the API, the console and the CLI run it, its dry run counted
// by count: it works on the tasks that failed within window before it started.
func (c *Client) BulkRedrivePlan(count RedriveCount, window time.Duration) *bulk.Plan[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome] {
	return &bulk.Plan[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome]{Op: BulkRedrive, Temporal: c.Temporal,
		TaskQueue: c.TaskQueue,
		Count: func(ctx context.Context, f pipeline.RedriveFilter, sample int) (int64, []string, error) {
			return count(ctx, f, int64(sample))
		},
		Apply: func(f pipeline.RedriveFilter, now time.Time) pipeline.RedriveFilter {
			return f.Within(now, window, now)
		}}
}

// PipelineRedriveBulkWorkflow redrives the failed tasks of a filter at a bounded rate (bulk.Run):
// one PipelineRedriveBatch per interval, each task redriven under the operation's redrive id so
// that a repeated batch redrives nothing twice.
func PipelineRedriveBulkWorkflow(ctx workflow.Context, in BulkInput) (*BulkProgress, error) {
	var a *pipelineact.Activities
	return bulk.Run(ctx, in, a.PipelineRedriveBatch, pipeline.StatusSuccess)
}
