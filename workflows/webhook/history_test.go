package webhook_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/taskloom/taskloom/internal/testenv"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

// recordHistory saves a finished workflow's history under testdata/histories/webhook/ when
// WEBHOOK_RECORD_HISTORIES=1, for the replay test.
func (e *env) recordHistory(workflowID, name string) {
	if os.Getenv("WEBHOOK_RECORD_HISTORIES") != "1" {
		return
	}
	it := e.tc.GetWorkflowHistory(e.ctx(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(testenv.RepoRoot(), "testdata/histories/webhook", name+".json"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
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
		wf.Register(r)
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("replay %s: %v", filepath.Base(f), err)
		}
	}
}
