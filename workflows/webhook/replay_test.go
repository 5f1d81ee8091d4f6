package webhook_test

import (
	"slices"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

func register(r worker.Registry) { webhookwf.Register(r, nil) }

// TestReplayRecordedHistories replays every recorded webhook history against the current code.
// The histories are recorded by the integration tests in api/webhook (RECORD_HISTORIES=1).
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "webhook", register)
}

// Every registered workflow type has at least one recorded history.
func TestEveryWorkflowTypeHasAHistory(t *testing.T) {
	files, err := histories.Files("webhook")
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, f := range files {
		typ, err := histories.WorkflowType(f)
		if err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, typ)
	}
	types := histories.RegisteredWorkflowTypes(register)
	if len(types) != 4 {
		t.Fatalf("registered workflow types %v, want the four webhook workflows", types)
	}
	for _, typ := range types {
		if !slices.Contains(recorded, typ) {
			t.Errorf("no recorded history of %s under testdata/histories/webhook", typ)
		}
	}
}
