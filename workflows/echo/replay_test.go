package echo

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded echo history against the current code.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "echo", func(r worker.Registry) { Register(r, nil) })
}
