package taskecho

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// failAfter writes the first n statements of a push's bulk write one by one and then fails, as a
// connection lost between two task writes would.
func failAfter(n int, times *int) func(context.Context, Store, []PushWrite) (bool, error) {
	return func(ctx context.Context, next Store, ws []PushWrite) (bool, error) {
		if *times == 0 {
			return next.WritePush(ctx, ws)
		}
		*times--
		for _, w := range ws[:min(n, len(ws))] {
			if _, err := next.WritePush(ctx, []PushWrite{w}); err != nil {
				return false, err
			}
		}
		return false, errors.New("injected: connection lost between two task writes")
	}
}

// TestSubmitFailingMidwayConverges: a push whose write fails after its first task completes the
// rest itself in the same call (every statement is idempotent and stamped with the push id, so a
// re-read tells which are still to do), and when no write gets through, the call fails, the queue
// is as it was, and a retry of the same push applies it.
func TestSubmitFailingMidwayConverges(t *testing.T) {
	f := newFixture(t)
	if _, err := f.submit("p", "q", clientTask("a", "pending"), clientTask("b", "pending"), clientTask("c", "pending")); err != nil {
		t.Fatal(err)
	}
	push := []map[string]any{{"id": "a", "name": "A2", "prompt": "x", "status": "done"}, {"id": "b", "name": "B2", "prompt": "x", "status": "done"},
		{"id": "d", "name": "D", "prompt": "x", "status": "pending"}} // c omitted: removed
	once := 1
	f.fault.push = failAfter(1, &once)
	if _, err := f.submit("p", "q", push...); err != nil {
		t.Fatalf("one fault: %v", err)
	}
	f.wantQueue("p", "q", map[string]string{"a": "A2", "b": "B2", "d": "D"})

	// A fault on every attempt after one statement: each attempt writes one more, so the call
	// still ends fully applied.
	always := 1 << 30
	push[0]["name"], push[1]["name"], push[2]["name"] = "A3", "B3", "D3"
	f.fault.push = failAfter(1, &always)
	if _, err := f.submit("p", "q", push...); err != nil {
		t.Fatalf("a fault after every first statement: %v", err)
	}
	f.wantQueue("p", "q", map[string]string{"a": "A3", "b": "B3", "d": "D3"})

	// The database gone for the whole call: nothing written, the call fails, the queue is as it
	// was, and the client's retry applies the push.
	push[0]["name"], push[1]["name"], push[2]["name"] = "A4", "B4", "D4"
	f.fault.push = failAfter(0, &always)
	if _, err := f.submit("p", "q", push...); err == nil {
		t.Fatal("a push whose every write fails answered success")
	}
	f.wantQueue("p", "q", map[string]string{"a": "A3", "b": "B3", "d": "D3"})
	f.fault.push = nil
	if _, err := f.submit("p", "q", push...); err != nil {
		t.Fatalf("retry: %v", err)
	}
	f.wantQueue("p", "q", map[string]string{"a": "A4", "b": "B4", "d": "D4"})
}

// wantQueue checks the live tasks of a queue by id and name.
func (f *fixture) wantQueue(project, queue string, want map[string]string) {
	f.t.Helper()
	q := queue
	tasks, err := f.svc.findTasks(f.ctx, "queue tasks", bson.M{"project_id": project, "queue_id": q, "deleted_at": nil})
	if err != nil {
		f.t.Fatal(err)
	}
	got := map[string]string{}
	for _, t := range tasks {
		got[t.TaskID] = t.Name
	}
	if len(got) != len(want) {
		f.t.Fatalf("queue %v, want %v", got, want)
	}
	for id, name := range want {
		if got[id] != name {
			f.t.Fatalf("queue %v, want %v", got, want)
		}
	}
}
