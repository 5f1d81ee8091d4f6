package webhook_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

// recordHistory records a finished workflow's history when the tests run with -record.
func (e *env) recordHistory(workflowID, name string) {
	e.t.Helper()
	testenv.RecordHistory(e.t, e.tc, "webhook", workflowID, "", name)
}

// TestReplayRecordedHistories replays every recorded history against the current workflow
// code; a non-deterministic change fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata/histories/webhook/*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded histories under testdata/histories/webhook (record with WEBHOOK_RECORD_HISTORIES=1)")
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		wf.RegisterWorkflows(r)
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("replay %s: %v", filepath.Base(f), err)
		}
	}
}
