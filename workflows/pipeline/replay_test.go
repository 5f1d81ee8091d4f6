package pipeline

import (
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays every recorded PipelineWorkflow history (recorded on the dev
// server by `go test ./api/pipeline -run . -record`) against the current code, so a change that
// breaks determinism for running workflows fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("../../testdata/histories/pipeline/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories under testdata/histories/pipeline")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			Register(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that no longer runs
// the recorded activities must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in Input) (*Result, error) {
		return &Result{Status: "success"}, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: "PipelineWorkflow"})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "../../testdata/histories/pipeline/basic_clean_success.json"); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}
