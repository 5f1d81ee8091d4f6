package crawl

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded crawl history against the current code, so a
// change that breaks determinism for running crawl tasks fails here.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "crawl", func(r worker.Registry) { Register(r, nil) })
}
