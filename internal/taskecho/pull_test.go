package taskecho

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestPullClaimsServerTasksInPriorityOrderUnderOneLease(t *testing.T) {
	f := newFixture(t)
	if _, err := f.submit("p1", "q1", clientTask("c1", "pending")); err != nil {
		t.Fatal(err)
	}
	f.serverTask("p1", "", "low", map[string]any{"priority": "low"})
	f.advance(time.Second)
	f.serverTask("p1", "q1", "high", map[string]any{"priority": "high"})
	f.advance(time.Second)
	f.serverTask("p1", "", "nine", map[string]any{"priority": 9})
	f.advance(time.Second)
	f.serverTask("p1", "", "none", nil)
	f.serverTask("p2", "", "other-project", nil)

	r := f.pull("worker-a", PullFilter{ProjectID: "p1", Limit: 10})
	if got, want := ids(r.Tasks), []string{"nine", "low", "none"}; !slices.Equal(got, want) {
		t.Fatalf("pulled %v, want %v (project level only, priority desc, then oldest; client tasks never)", got, want)
	}
	for _, task := range r.Tasks {
		stored, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "p1", TaskID: task.TaskID, AnyQueue: true}, false)
		if err != nil {
			t.Fatal(err)
		}
		if deref(stored.LeaseID) != r.LeaseID || deref(stored.PulledBy) != "worker-a" || stored.PulledAt == nil {
			t.Fatalf("%s stored lease %v by %v, want %s by worker-a", task.TaskID, stored.LeaseID, stored.PulledBy, r.LeaseID)
		}
		if len(stored.PullHistory) != 1 || stored.PullHistory[0].LeaseID != r.LeaseID || stored.PullHistory[0].ReleasedAt != nil {
			t.Fatalf("%s history %+v, want one open entry", task.TaskID, stored.PullHistory)
		}
	}
	if again := f.pull("worker-b", PullFilter{ProjectID: "p1", Limit: 10}); len(again.Tasks) != 0 {
		t.Fatalf("a live lease must block other pullers, got %v", ids(again.Tasks))
	}
	q1 := "q1"
	if got := ids(f.pull("worker-b", PullFilter{ProjectID: "p1", QueueID: &q1, Limit: 10}).Tasks); !slices.Equal(got, []string{"high"}) {
		t.Fatalf("queue pull %v, want the queue's task", got)
	}
}

func TestExpiredLeaseIsRedeliveredWithTimeoutInHistory(t *testing.T) {
	f := newFixture(t)
	f.serverTask("p", "", "t1", nil)
	first := f.pull("a", PullFilter{ProjectID: "p"})
	f.advance(f.svc.Settings().PullTimeout + time.Second)
	second := f.pull("b", PullFilter{ProjectID: "p"})
	if len(second.Tasks) != 1 {
		t.Fatalf("expired lease must not block a pull, got %d tasks", len(second.Tasks))
	}
	h := second.Tasks[0].PullHistory
	if len(h) != 2 || deref(h[0].Reason) != ReleaseTimeout || deref(h[0].ReleasedBy) != ReleasedByTimeout ||
		h[0].LeaseID != first.LeaseID || h[1].LeaseID != second.LeaseID || h[1].ReleasedAt != nil {
		t.Fatalf("history %+v, want the first lease closed by timeout and the second open", h)
	}
	if _, _, err := f.svc.Release(f.ctx, Actor{Name: "a"}, TaskRef{ProjectID: "p", TaskID: "t1"}, first.LeaseID); !IsKind(err, KindLeaseExpired) {
		t.Fatalf("release with the expired lease: %v, want lease expired", err)
	}
	if _, _, err := f.svc.Confirm(f.ctx, Actor{Name: "a"}, TaskRef{ProjectID: "p", TaskID: "t1"}, first.LeaseID); !IsKind(err, KindLeaseExpired) {
		t.Fatalf("confirm with the expired lease: %v, want lease expired", err)
	}
	if _, _, err := f.svc.Confirm(f.ctx, Actor{Name: "b"}, TaskRef{ProjectID: "p", TaskID: "t1"}, second.LeaseID); err != nil {
		t.Fatalf("confirm with the current lease: %v", err)
	}
	if r := f.pull("c", PullFilter{ProjectID: "p"}); len(r.Tasks) != 0 {
		t.Fatalf("a confirmed task must not be pulled again, got %v", ids(r.Tasks))
	}
}

func TestSweeperReleasesExpiredLeases(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		f.serverTask("p", "", id, nil)
	}
	f.pull("w", PullFilter{ProjectID: "p", Limit: 2})
	f.advance(2 * time.Hour)
	n, err := f.svc.ReleaseExpiredLeases(f.ctx, 500)
	if err != nil || n != 2 {
		t.Fatalf("released %d (%v), want 2", n, err)
	}
	timedOut := 0
	for _, id := range []string{"a", "b", "c"} {
		task, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "p", TaskID: id}, false)
		if err != nil {
			t.Fatal(err)
		}
		if task.LeaseID != nil || task.PulledAt != nil {
			t.Fatalf("task %s still leased after the sweep: %+v", id, task)
		}
		for _, e := range task.PullHistory {
			if deref(e.Reason) == ReleaseTimeout {
				timedOut++
			}
		}
	}
	if timedOut != 2 {
		t.Fatalf("%d leases closed by timeout, want 2", timedOut)
	}
	if r := f.pull("w2", PullFilter{ProjectID: "p", Limit: 10}); len(r.Tasks) != 3 {
		t.Fatalf("after the sweep all 3 are pullable, got %v", ids(r.Tasks))
	}
}

// A project pull hands out the project's own tasks only, whether the queue's task was created
// before or after them, and leaves the queue's task to the queue's pull.
func TestProjectPullNeverTakesQueueTasks(t *testing.T) {
	f := newFixture(t)
	q := "q"
	for _, queueFirst := range []bool{true, false} {
		project := fmt.Sprintf("queue-first-%v", queueFirst)
		if _, err := f.submit(project, q, clientTask("c", "done")); err != nil {
			t.Fatal(err)
		}
		create := []func(){
			func() { f.serverTask(project, q, "in-queue", map[string]any{"priority": "high"}) },
			func() { f.serverTask(project, "", "own", nil) },
		}
		if !queueFirst {
			slices.Reverse(create)
		}
		for _, c := range create {
			c()
			f.advance(time.Second)
		}
		if got := ids(f.pull("project-client", PullFilter{ProjectID: project}).Tasks); !slices.Equal(got, []string{"own"}) {
			t.Fatalf("%s: project pull %v, want only the project-level task", project, got)
		}
		if got := ids(f.pull("project-client", PullFilter{ProjectID: project}).Tasks); len(got) != 0 {
			t.Fatalf("%s: second project pull %v, want nothing", project, got)
		}
		if got := ids(f.pull("queue-client", PullFilter{ProjectID: project, QueueID: &q}).Tasks); !slices.Equal(got, []string{"in-queue"}) {
			t.Fatalf("%s: queue pull %v, want the queue's task", project, got)
		}
	}
}
