package pipeline

import (
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded pipeline history against the current code,
// so a change that breaks determinism for running workflows fails here.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "pipeline", func(r worker.Registry) { Register(r, nil) })
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that no longer runs
// the recorded activities must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in Input) (*Result, error) {
		return &Result{Status: "success"}, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: "PipelineWorkflow"})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join(histories.Dir("pipeline"), "basic_clean_success.json")); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}
