package taskecho

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// errMongoDown is what the driver answers when MongoDB does not answer in time; the API maps it to
// 503 with Retry-After (httpx.IsUnavailable).
var errMongoDown = fmt.Errorf("server selection: %w", context.DeadlineExceeded)

// downFor makes the fixture's store fail the named methods.
func downFor(methods ...string) func(string) error {
	return func(m string) error {
		for _, x := range methods {
			if m == x {
				return errMongoDown
			}
		}
		return nil
	}
}

// An append writes the task (message and message_id in one update), then the task's first append
// of a second touches the project, then the queue. A crash after any of those writes leaves the
// message stored once with its id; the touches it did not reach stay behind (last_task_at is an
// ordering hint, never read back by a write) until the task's first append of a later second
// moves them.
func TestAppendCrashBetweenWritesKeepsTheMessage(t *testing.T) {
	for _, crash := range []struct {
		name string
		down []string
	}{{"after the task's update", []string{"UpdateProject", "UpdateQueue"}}, {"after the project's touch", []string{"UpdateQueue"}}} {
		t.Run(crash.name, func(t *testing.T) {
			f := newFixture(t)
			if _, err := f.submit("p", "q", clientTask("a", "pending")); err != nil {
				t.Fatal(err)
			}
			pushed := f.now
			f.advance(time.Minute)
			in := &IncrementalInput{ProjectID: "p", QueueID: "q", TaskID: "a", Role: "user"}
			f.fault.down = downFor(crash.down...)
			in.Content = "m0"
			r, err := f.svc.AppendMessage(f.ctx, in)
			if err != nil || r.Index != 0 {
				t.Fatalf("append with the touch failing: %+v (%v), want message_id 0 (the touch is not the append)", r, err)
			}
			f.fault.down = nil
			p, _ := f.svc.Lookup.Project(f.ctx, "p")
			q, _ := f.svc.Lookup.Queue(f.ctx, "p", "q", nil)
			projectMoved := len(crash.down) == 1
			if p.LastTaskAt.Equal(f.now) != projectMoved || !q.LastTaskAt.Equal(pushed) {
				t.Fatalf("after the crash: project last_task_at %v, queue %v (pushed %v, now %v)", p.LastTaskAt, q.LastTaskAt, pushed, f.now)
			}
			in.Content = "m1" // same second: this second's touch was the crashed one
			if r, err := f.svc.AppendMessage(f.ctx, in); err != nil || r.Index != 1 {
				t.Fatalf("second append %+v (%v)", r, err)
			}
			f.advance(time.Second)
			in.Content = "m2"
			if r, err := f.svc.AppendMessage(f.ctx, in); err != nil || r.Index != 2 {
				t.Fatalf("third append %+v (%v)", r, err)
			}
			p, _ = f.svc.Lookup.Project(f.ctx, "p")
			q, _ = f.svc.Lookup.Queue(f.ctx, "p", "q", nil)
			if !p.LastTaskAt.Equal(f.now) || !q.LastTaskAt.Equal(f.now) {
				t.Fatalf("a later second's append: project last_task_at %v, queue %v, want %v", p.LastTaskAt, q.LastTaskAt, f.now)
			}
			task, err := f.svc.Lookup.Task(f.ctx, TaskRef{ProjectID: "p", QueueID: strp("q"), TaskID: "a"}, false)
			if err != nil || task.MessageSeq != 3 || len(task.Messages) != 3 || task.Messages[0].Content != "m0" {
				t.Fatalf("task after the appends: %+v (%v), want m0..m2 once each", task, err)
			}
		})
	}
}

// With MongoDB down at the pull's read or at its lease write, the pull fails with the driver's
// unavailability (503 over HTTP) and leases nothing; with it down at the audit insert, after the
// lease write, the pull hands its tasks out (the operation happened; the lost audit row is logged).
// Nothing is lost either way: the next pull hands out every task not handed out before.
func TestPullWithMongoDown(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.serverTask("p", "", fmt.Sprintf("s%d", i), nil)
	}
	for _, m := range []string{"PullCandidates", "WriteTasks"} {
		f.fault.down = downFor(m)
		r, err := f.svc.Pull(f.ctx, Actor{Name: "c"}, PullFilter{ProjectID: "p", Limit: 2})
		if !errors.Is(err, context.DeadlineExceeded) || r != nil {
			t.Fatalf("pull with %s down: %+v, %v; want the unavailability", m, r, err)
		}
	}
	leased, err := f.svc.findTasks(f.ctx, "leased", map[string]any{"lease_id": map[string]any{"$ne": nil}})
	if err != nil || len(leased) != 0 {
		t.Fatalf("leased after failed pulls: %v (%v), want none", ids(leased), err)
	}
	f.fault.down = downFor("InsertAudit")
	first := f.pull("c", PullFilter{ProjectID: "p", Limit: 2})
	f.fault.down = nil
	rest := f.pull("c", PullFilter{ProjectID: "p"})
	got := append(ids(first.Tasks), ids(rest.Tasks)...)
	if len(first.Tasks) != 2 || len(got) != 3 || got[0] == got[2] || got[1] == got[2] {
		t.Fatalf("pulls after the outage handed out %v, want each of the 3 tasks once", got)
	}
}
