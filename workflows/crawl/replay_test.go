package crawl

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv"
)

// TestReplayRecordedHistories replays every history recorded from the
// integration tests (CRAWL_RECORD_HISTORIES=1 go test ./api/crawl) against
// the current workflow code; a non-deterministic change fails here. They
// were recorded before versionPrefixedNames, so they also prove that a run
// started then still schedules the bare activity names it recorded.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata/histories/crawl/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories under testdata/histories/crawl: %v", err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflow(CrawlTaskWorkflow)
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("replay %s: %v", filepath.Base(f), err)
		}
	}
}
