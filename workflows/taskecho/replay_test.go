package taskecho

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded taskecho history against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "taskecho", func(r worker.Registry) { Register(r, nil) })
}
