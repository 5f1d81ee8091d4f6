package taskecho

import (
	"fmt"
	"testing"

	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// A reset-error batch whose worker died after writing is retried from the same cursor. The retry
// no longer sees the tasks it reset and reaches further; the operation must still count every
// task once (it used to report one batch short).
func TestQueueOpCountSurvivesARetriedBatch(t *testing.T) {
	f := newFixture(t)
	var tasks []map[string]any
	for i := range 12 {
		status := StatusError
		if i%4 == 3 {
			status = "done" // not touched by reset-error
		}
		tasks = append(tasks, clientTask(fmt.Sprintf("t%02d", i), status))
	}
	if _, err := f.submit("p", "q", tasks...); err != nil {
		t.Fatal(err)
	}
	op := queueop.Op{ProjectID: "p", QueueID: "q", Operation: queueop.ResetError, Actor: "test", At: f.now}
	const batch = 4

	// The lost attempt: it writes its batch, but the workflow never learns the result.
	if _, _, err := f.svc.ApplyQueueOpBatch(f.ctx, op, "", batch); err != nil {
		t.Fatal(err)
	}
	// The retry and the rest of the operation, from the same cursor.
	total, after := 0, ""
	for {
		n, next, err := f.svc.ApplyQueueOpBatch(f.ctx, op, after, batch)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if next == "" {
			break
		}
		after = next
	}
	if total != 9 {
		t.Fatalf("reset-error counted %d tasks, want the 9 error tasks", total)
	}
	left, err := f.svc.CountQueueOp(f.ctx, op)
	if err != nil || left != 0 {
		t.Fatalf("error tasks left %d (%v), want 0", left, err)
	}
}

// Re-running a finished reset batch changes nothing and counts the same tasks again, never more.
func TestQueueOpBatchIsIdempotent(t *testing.T) {
	f := newFixture(t)
	if _, err := f.submit("p", "q", clientTask("a", StatusError), clientTask("b", "done"), clientTask("c", StatusPending)); err != nil {
		t.Fatal(err)
	}
	op := queueop.Op{ProjectID: "p", QueueID: "q", Operation: queueop.Reset, Actor: "test", At: f.now}
	for i := range 2 {
		n, next, err := f.svc.ApplyQueueOpBatch(f.ctx, op, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 || next == "" {
			t.Fatalf("attempt %d: changed %d next %q, want 3 and a cursor", i, n, next)
		}
	}
}
