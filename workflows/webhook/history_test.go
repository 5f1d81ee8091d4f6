package webhook_test

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

// recordHistory records a finished workflow's history when RECORD_HISTORIES is set.
func (e *env) recordHistory(workflowID, name string) {
	e.t.Helper()
	histories.Record(e.t, e.tc, "webhook", workflowID, "", name)
}

// TestReplayRecordedHistories replays every recorded webhook history against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "webhook", func(r worker.Registry) { wf.Register(r, nil) })
}
