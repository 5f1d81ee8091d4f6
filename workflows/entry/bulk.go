package entry

import (
	"context"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/entry"
)

// BulkInput starts (or continues) a bulk resume or drop: Params is each task's signal payload.
type BulkInput = bulk.Input[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome]

// BulkProgress is what a bulk resume or drop has done so far.
type BulkProgress = bulk.Progress[entry.BulkFilter, entry.BulkOutcome]

// BulkOps are the entry queue's bulk operations, resume and drop, by name: one workflow type
// (EntryBulkWorkflow) serves both.
var BulkOps = map[string]bulk.Op{
	entry.BulkResume: bulkOp(entry.BulkResume),
	entry.BulkDrop:   bulkOp(entry.BulkDrop),
}

func bulkOp(name string) bulk.Op {
	return bulk.Op{Name: name, Noun: "bulk " + name, ID: "entry-bulk-" + name, Workflow: EntryBulkWorkflow,
		Kind: entry.KindBulk, Running: entry.StatusProcessing}
}

// BulkCount counts the suspended tasks a filter selects and lists up to sample of their ids
// (entrydb.Store.CountSuspended).
type BulkCount func(ctx context.Context, f entry.BulkFilter, sample int) (int64, []string, error)

// BulkPlan is the bulk operation op (BulkOps) as the API and the CLI run it, its dry run
// counted by count: it works on the tasks suspended by the time it starts.
func (c *Client) BulkPlan(op string, count BulkCount) *bulk.Plan[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome] {
	return &bulk.Plan[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome]{Op: BulkOps[op], Temporal: c.Temporal,
		TaskQueue: c.TaskQueue, Count: count, Apply: entry.BulkFilter.Until}
}

// EntryBulkWorkflow resumes or drops the suspended tasks of a filter at a bounded rate (bulk.Run):
// one EntryBulkBatch per interval, each task through the single-task path (a task no longer
// suspended is skipped, so a repeated batch does nothing twice).
func EntryBulkWorkflow(ctx workflow.Context, in BulkInput) (*BulkProgress, error) {
	if in.Op != entry.BulkResume && in.Op != entry.BulkDrop {
		return nil, temporal.NewNonRetryableApplicationError("bulk input needs the op resume or drop", "InvalidInput", nil)
	}
	var a *entryact.Activities
	return bulk.Run(ctx, in, a.EntryBulkBatch, entry.StatusCompleted)
}
