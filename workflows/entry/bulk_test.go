package entry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/entry"
)

// EntryBulkWorkflow pages through the filter one batch per interval, carrying the cursor, and
// counts each outcome; the progress query answers the same.
func TestBulkPagesAtTheIntervalAndCountsOutcomes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *entryact.Activities
	pages := map[string]*entry.BulkBatchResult{
		"":   {Outcomes: []entry.BulkOutcome{{TaskID: "t1", Outcome: entry.OutcomeResumed}, {TaskID: "t2", Outcome: entry.OutcomeSkipped}}, Last: "t2"},
		"t2": {Outcomes: []entry.BulkOutcome{{TaskID: "t3", Outcome: entry.OutcomeError, Error: "boom"}}, Last: "t3", Done: true},
	}
	var afters []string
	var times []time.Time
	env.OnActivity(a.EntryBulkBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req entry.BulkBatchRequest) (*entry.BulkBatchResult, error) {
		if req.Op != entry.BulkResume || req.Limit != 2 || req.Params.Operator != "ops" {
			t.Errorf("batch request: %+v", req)
		}
		afters, times = append(afters, req.After), append(times, env.Now())
		return pages[req.After], nil
	})
	env.ExecuteWorkflow(EntryBulkWorkflow, BulkInput{Op: entry.BulkResume, ID: "b1", BatchSize: 2, Interval: 5 * time.Second,
		Params: entry.SignalPayload{Operator: "ops"}, Progress: BulkProgress{Total: 3}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var p BulkProgress
	if err := env.GetWorkflowResult(&p); err != nil {
		t.Fatal(err)
	}
	if !p.Finished || p.Done != 3 || p.Applied != 1 || p.Skipped != 1 || p.Errors != 1 || len(p.Outcomes) != 3 || p.Total != 3 {
		t.Fatalf("progress: %+v", p)
	}
	if len(afters) != 2 || afters[1] != "t2" || times[1].Sub(times[0]) < 5*time.Second {
		t.Fatalf("batches after %v at %v", afters, times)
	}
	v, err := env.QueryWorkflow(bulk.QueryProgress)
	if err != nil {
		t.Fatal(err)
	}
	var q BulkProgress
	if err := v.Get(&q); err != nil || q.Done != 3 {
		t.Fatalf("query: %+v %v", q, err)
	}
}

// A bulk input without an op is refused at once.
func TestBulkRefusesAnUnknownOp(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(EntryBulkWorkflow, BulkInput{Op: "nuke", ID: "b1", BatchSize: 2, Interval: time.Second})
	if env.GetWorkflowError() == nil {
		t.Fatal("an unknown op ran")
	}
}
