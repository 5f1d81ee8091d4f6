package echo

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv"
)

// TestReplayRecordedHistories replays the histories recorded by the integration tests
// (ECHO_RECORD_HISTORIES=1 go test ./api/echo) against the current workflow code; a
// non-deterministic change fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata/histories/echo/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories under testdata/histories/echo: %v", err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflow(PullLeaseSweeperWorkflow)
		r.RegisterWorkflow(QueueOperationWorkflow)
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("replay %s: %v", filepath.Base(f), err)
		}
	}
}
