package crawl

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded crawl history against the current code. They
// were recorded before versionPrefixedNames, so they also prove that a run started then still
// schedules the bare activity names it recorded.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "crawl", func(r worker.Registry) { Register(r, nil) })
}
