package entry

import (
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	domain "github.com/taskloom/taskloom/internal/entry"
)

// TestReplayRecordedHistories replays every recorded EntryTaskWorkflow history (recorded on the
// dev server by `go test ./api/entry -run 'TestRule1|TestRule2|TestRule4|TestLongReplies|TestRefusedReply'
// -args -record`) against the current code, so a change that breaks determinism for running
// tasks fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("../../testdata/histories/entry/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("want the recorded histories under testdata/histories/entry, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			// The activities need no registration to replay: their method names are the type
			// names the histories record (the replayer takes no activities anyway).
			r.RegisterWorkflowWithOptions(EntryTaskWorkflow, workflow.RegisterOptions{Name: domain.WorkflowType})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that skips the
// recorded steps must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in domain.WorkflowInput) (*domain.TaskStatus, error) {
		return &domain.TaskStatus{Status: domain.StatusCompleted}, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: domain.WorkflowType})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "../../testdata/histories/entry/http_completed.json"); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}
