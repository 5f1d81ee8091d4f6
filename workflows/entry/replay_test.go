package entry

import (
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded EntryTaskWorkflow history against the current
// code, so a change that breaks determinism for running tasks fails here.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "entry", func(r worker.Registry) { Register(r, nil) })
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that skips the
// recorded steps must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in entry.WorkflowInput) (*entry.TaskStatus, error) {
		return &entry.TaskStatus{Status: entry.StatusCompleted}, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: entry.WorkflowType})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join(histories.Dir("entry"), "http_completed.json")); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}
