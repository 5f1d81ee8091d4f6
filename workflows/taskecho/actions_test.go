package taskecho

import (
	"path/filepath"
	"testing"

	"github.com/taskloom/taskloom/internal/actions"
	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestQueueOperationActions holds a queue operation's Temporal Cloud actions per operation, read
// from the recorded histories by internal/actions: a reset of a queue that fits in one
// TaskEchoRunQueueOp call (up to 10,000 tasks) is its start and that one activity — the Version
// markers and their TemporalChangeVersion upserts cost nothing, and the search attributes are set
// at start. The recording from before taskecho-queueop-one-activity (one activity per batch, a
// trailing empty batch, a finish activity) cost twice as much.
func TestQueueOperationActions(t *testing.T) {
	for _, c := range []struct {
		file    string
		actions int
	}{{"queue_reset_one_activity.json", 2}, {"queue_reset.json", 4}} {
		cost, err := actions.FromFile(filepath.Join(histories.Dir("taskecho"), c.file))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d events, %d actions (%d retries)", c.file, cost.Events, cost.Actions, cost.Retries)
		if cost.Designed() != c.actions {
			t.Errorf("%s: %d actions (retries aside), want %d", c.file, cost.Designed(), c.actions)
		}
	}
}
