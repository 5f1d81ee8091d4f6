package taskecho

import (
	"testing"
)

// A batch confirm settles the lease's tasks in bulk and answers every listed id on its own: a
// task the lease does not hold gets 404 (absent) or 409 (not this lease), an id listed twice is
// settled once.
func TestConfirmBatchAnswersEachListedTask(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		f.serverTask("p", "", id, nil)
	}
	f.serverTask("p", "", "other", nil)
	r := f.pull("w", PullFilter{ProjectID: "p", Limit: 3})
	if len(r.Tasks) != 3 {
		t.Fatalf("pulled %v", ids(r.Tasks))
	}
	items, err := f.svc.ConfirmBatch(f.ctx, admin, "p", []string{"a", "a", "missing", "other", "b"}, r.LeaseID)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id   string
		kind Kind // 0: done
	}{{"a", 0}, {"a", KindConflict}, {"missing", KindNotFound}, {"other", KindConflict}, {"b", 0}}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, w := range want {
		it := items[i]
		if it.TaskID != w.id || (w.kind == 0) != (it.Err == nil) || (w.kind != 0 && !IsKind(it.Err, w.kind)) {
			t.Fatalf("item %d = %s %v, want %s kind %d", i, it.TaskID, it.Err, w.id, w.kind)
		}
	}
	for id, wantLease := range map[string]bool{"a": false, "b": false, "c": true} {
		task, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "p", TaskID: id}, false)
		if err != nil {
			t.Fatal(err)
		}
		if (task.LeaseID != nil) != wantLease {
			t.Fatalf("%s lease %v, want held=%v", id, task.LeaseID, wantLease)
		}
		if !wantLease && (task.PulledAt == nil || len(task.PullHistory) != 1 || task.PullHistory[0].PushedAt == nil) {
			t.Fatalf("%s confirmed: pulled_at %v history %+v, want kept pull and a pushed entry", id, task.PulledAt, task.PullHistory)
		}
	}
}

// A batch release with a lease_id frees the lease's listed tasks for the next pull; a stale
// lease_id is 409 for each task.
func TestReleaseBatchWithLeaseFreesTasks(t *testing.T) {
	f := newFixture(t)
	f.serverTask("p", "", "a", nil)
	f.serverTask("p", "", "b", nil)
	r := f.pull("w", PullFilter{ProjectID: "p"})
	items, err := f.svc.ReleaseBatch(f.ctx, admin, "p", []string{"a", "b"}, r.LeaseID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("release %s: %v", it.TaskID, it.Err)
		}
	}
	again := f.pull("w2", PullFilter{ProjectID: "p"})
	if len(again.Tasks) != 2 {
		t.Fatalf("released tasks pulled again: %v", ids(again.Tasks))
	}
	h := again.Tasks[0].PullHistory
	if len(h) != 2 || deref(h[0].Reason) != ReleaseClient {
		t.Fatalf("history %+v, want the first lease closed by the client", h)
	}
	stale, err := f.svc.ReleaseBatch(f.ctx, admin, "p", []string{"a"}, r.LeaseID)
	if err != nil || len(stale) != 1 || !IsKind(stale[0].Err, KindConflict) {
		t.Fatalf("stale release: %+v %v", stale, err)
	}
}
