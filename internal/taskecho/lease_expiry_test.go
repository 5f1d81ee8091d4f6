package taskecho

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/mongox"
)

// leaseState is what a lease call may change on a task.
type leaseState struct {
	rev      int64
	leaseID  string
	pulled   bool
	history  int
	released bool // the last history entry is closed
}

// leaseStates reads the lease state of every task of project, by task id.
func (f *fixture) leaseStates(project string) map[string]leaseState {
	f.t.Helper()
	tasks, err := f.svc.findTasks(f.ctx, "lease states", bson.M{"project_id": project})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make(map[string]leaseState, len(tasks))
	for _, t := range tasks {
		st := leaseState{rev: t.Rev, leaseID: deref(t.LeaseID), pulled: t.PulledAt != nil, history: len(t.PullHistory)}
		if n := len(t.PullHistory); n > 0 {
			st.released = t.PullHistory[n-1].ReleasedAt != nil
		}
		out[t.TaskID] = st
	}
	return out
}

// wantUnchanged fails unless project's tasks are as before.
func (f *fixture) wantUnchanged(project string, before map[string]leaseState) {
	f.t.Helper()
	after := f.leaseStates(project)
	for id, b := range before {
		if after[id] != b {
			f.t.Fatalf("task %s changed: %+v, was %+v", id, after[id], b)
		}
	}
}

// wantRepulledAfterTimeout pulls project as another client and checks it gets every task, each
// with its previous lease closed by timeout (not by the call that came too late).
func (f *fixture) wantRepulledAfterTimeout(project string, n int) *PullResult {
	f.t.Helper()
	r := f.pull("next-client", PullFilter{ProjectID: project})
	if len(r.Tasks) != n {
		f.t.Fatalf("next client pulled %v, want all %d tasks", ids(r.Tasks), n)
	}
	for _, t := range r.Tasks {
		h := t.PullHistory
		if len(h) != 2 || deref(h[0].Reason) != ReleaseTimeout || h[0].PushedAt != nil {
			f.t.Fatalf("%s history %+v, want the expired lease closed by timeout", t.TaskID, h)
		}
	}
	return r
}

// A lease that expired a moment ago, before any sweep, is over for every call: release and
// confirm, single and batch, answer LEASE_EXPIRED and change nothing, and the next client pulls
// the tasks. Once they are pulled again, a call naming the old lease still answers
// LEASE_EXPIRED, not a plain conflict.
func TestExpiredLeaseEndsNothing(t *testing.T) {
	t1 := func(project string) TaskRef { return TaskRef{ProjectID: project, TaskID: "t1"} }
	type call func(f *fixture, project, leaseID string) error
	cases := []struct {
		name string
		call call
		// named: the call names the lease, so it still refers to the old one after the re-pull.
		named bool
	}{
		{"release", func(f *fixture, p, lease string) error {
			_, _, err := f.svc.Release(f.ctx, admin, t1(p), lease)
			return err
		}, true},
		{"release without lease_id", func(f *fixture, p, _ string) error {
			_, _, err := f.svc.Release(f.ctx, admin, t1(p), "")
			return err
		}, false},
		{"confirm", func(f *fixture, p, lease string) error {
			_, _, err := f.svc.Confirm(f.ctx, admin, t1(p), lease)
			return err
		}, true},
		{"release batch", func(f *fixture, p, lease string) error {
			_, err := f.svc.ReleaseBatch(f.ctx, admin, p, []string{"t1", "t2"}, lease)
			return err
		}, true},
		{"confirm batch", func(f *fixture, p, lease string) error {
			_, err := f.svc.ConfirmBatch(f.ctx, admin, p, []string{"t1", "t2"}, lease)
			return err
		}, true},
		{"confirm batch of the whole lease", func(f *fixture, p, lease string) error {
			_, err := f.svc.ConfirmBatch(f.ctx, admin, p, nil, lease)
			return err
		}, false}, // after the re-pull no task holds the lease: nothing to confirm
	}
	f := newFixture(t)
	for i, c := range cases {
		project := fmt.Sprintf("p%d", i)
		f.serverTask(project, "", "t1", nil)
		f.serverTask(project, "", "t2", nil)
		r := f.pull("first-client", PullFilter{ProjectID: project})
		f.advance(f.svc.Settings().PullTimeout + time.Millisecond)
		before := f.leaseStates(project)
		if err := c.call(f, project, r.LeaseID); !IsKind(err, KindLeaseExpired) {
			t.Fatalf("%s with a lease expired a moment ago: %v, want LEASE_EXPIRED", c.name, err)
		}
		f.wantUnchanged(project, before)
		f.wantRepulledAfterTimeout(project, 2)
		if c.named {
			if err := c.call(f, project, r.LeaseID); !IsKind(err, KindLeaseExpired) {
				t.Fatalf("%s with the expired lease after a re-pull: %v, want LEASE_EXPIRED", c.name, err)
			}
		}
	}
}

// A batch confirm decided while its lease was live but written after the lease expired ends
// nothing: the expiry is in the write's filter, not only in the check of the read (no other
// writer touched the tasks, so the revision guard alone would have let it through).
func TestLeaseExpiringBeforeTheBatchWriteEndsNothing(t *testing.T) {
	f := newFixture(t)
	f.serverTask("p", "", "t1", nil)
	f.serverTask("p", "", "t2", nil)
	r := f.pull("first-client", PullFilter{ProjectID: "p"})
	f.advance(f.svc.Settings().PullTimeout - time.Millisecond)
	before := f.leaseStates("p")
	f.svc.beforeLeaseWrite = func() error {
		f.advance(2 * time.Millisecond)
		return nil
	}
	_, err := f.svc.ConfirmBatch(f.ctx, admin, "p", []string{"t1", "t2"}, r.LeaseID)
	f.svc.beforeLeaseWrite = nil
	if !IsKind(err, KindLeaseExpired) {
		t.Fatalf("confirm decided before the expiry and written after it: %v, want LEASE_EXPIRED", err)
	}
	f.wantUnchanged("p", before)
	f.wantRepulledAfterTimeout("p", 2)
}

// A batch call that dies between its read and its write leaves every task as it was, and the
// client's retry settles the batch.
func TestBatchCrashBeforeTheWriteChangesNothing(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		f.serverTask("p", "", id, nil)
	}
	r := f.pull("w", PullFilter{ProjectID: "p"})
	before := f.leaseStates("p")
	crash := errors.New("injected: process died before the write")
	f.svc.beforeLeaseWrite = func() error { return crash }
	if _, err := f.svc.ConfirmBatch(f.ctx, admin, "p", []string{"a", "b", "c"}, r.LeaseID); !errors.Is(err, crash) {
		t.Fatalf("crashed confirm: %v", err)
	}
	f.wantUnchanged("p", before)
	f.svc.beforeLeaseWrite = nil
	items, err := f.svc.ConfirmBatch(f.ctx, admin, "p", []string{"a", "b", "c"}, r.LeaseID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("retry: %s %v", it.TaskID, it.Err)
		}
	}
	for id, st := range f.leaseStates("p") {
		if st.leaseID != "" || !st.pulled || !st.released {
			t.Fatalf("%s after the retry %+v, want confirmed (lease ended, pull kept)", id, st)
		}
	}
}

// A list longer than a pull hands out is refused before any read, naming the field and the
// limit; a full list is settled with the same few commands whatever its ids are (held by the
// lease, by another one, or missing).
func TestBatchIsBoundedAndSettledInConstantCommands(t *testing.T) {
	const size = 20
	f := newFixture(t, func(s *Settings) { s.PullBatchSize = size })
	for i := range 2 * size {
		f.serverTask("p", "", fmt.Sprintf("t%02d", i), nil)
	}
	mine, other := f.pull("w", PullFilter{ProjectID: "p"}), f.pull("w2", PullFilter{ProjectID: "p"})

	long := make([]string, 10_000)
	for i := range long {
		long[i] = fmt.Sprintf("t%05d", i)
	}
	ctx, tally := mongox.WithTally(f.ctx)
	for name, call := range map[string]func() error{
		"release": func() error { _, err := f.svc.ReleaseBatch(ctx, admin, "p", long, mine.LeaseID); return err },
		"confirm": func() error { _, err := f.svc.ConfirmBatch(ctx, admin, "p", long[:size+1], mine.LeaseID); return err },
	} {
		var de *Error
		if err := call(); !errors.As(err, &de) || de.Kind != KindValidation || de.Details["field"] != "taskIds" || de.Details["limit"] != size {
			t.Fatalf("%s of a list longer than pull_batch_size: %v %+v, want a validation error naming taskIds and %d", name, err, de, size)
		}
	}
	if n := tally.Total(); n != 0 {
		t.Fatalf("refusing a long list sent %d commands (%s), want none", n, tally)
	}

	// Half the list is the lease's, a quarter another lease's, a quarter missing.
	list := append(ids(mine.Tasks[:size/2]), ids(other.Tasks[:size/4])...)
	for i := range size / 4 {
		list = append(list, fmt.Sprintf("missing-%d", i))
	}
	items, err := f.svc.ConfirmBatch(ctx, admin, "p", list, mine.LeaseID)
	if err != nil {
		t.Fatal(err)
	}
	var done, stale, missing int
	for _, it := range items {
		switch {
		case it.Err == nil:
			done++
		case IsKind(it.Err, KindConflict):
			stale++
		case IsKind(it.Err, KindNotFound):
			missing++
		}
	}
	if done != size/2 || stale != size/4 || missing != size/4 {
		t.Fatalf("answers: %d done, %d stale, %d missing; want %d, %d, %d", done, stale, missing, size/2, size/4, size/4)
	}
	// One read of the listed tasks, one bulk write, one audit insert.
	if n := tally.Total(); n != 3 {
		t.Fatalf("a full mixed batch took %d commands (%s), want 3", n, tally)
	}
	st := f.leaseStates("p")
	if slices.ContainsFunc(other.Tasks, func(t *Task) bool { return st[t.TaskID].leaseID != other.LeaseID }) {
		t.Fatalf("a task of another lease lost its lease: %+v", st)
	}
}
