package webhook_test

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// TestReplayRecordedHistories replays every recorded webhook history against the current code.
// The histories are recorded by the integration tests in api/webhook (RECORD_HISTORIES=1);
// tests/arch checks that every registered workflow type has one.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "webhook", func(r worker.Registry) { webhookwf.Register(r, nil) })
}
