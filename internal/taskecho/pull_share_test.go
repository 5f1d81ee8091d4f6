package taskecho

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func tasksNamed(n int) []*Task {
	out := make([]*Task, n)
	for i := range out {
		out[i] = &Task{ID: ID{byte(i + 1)}, TaskID: fmt.Sprintf("t%02d", i)}
	}
	return out
}

// Pulls that meet one read in flight take disjoint parts of it, the leader first, in order.
func TestConcurrentPullsShareOneReadInDisjointParts(t *testing.T) {
	sh := newCandidateShare()
	sh.join("k")
	sh.join("k")
	sh.join("k")
	r, lead := sh.current("k", 5)
	if !lead || r.window != 5*claimWindowFactor*3 {
		t.Fatalf("first pull: lead=%v window=%d, want to lead a read sized for 3 pulls (%d)", lead, r.window, 5*claimWindowFactor*3)
	}
	if joined, lead := sh.current("k", 5); lead || joined != r {
		t.Fatal("a pull arriving while the read is in flight must wait for it, not read again")
	}
	leader, err := sh.finish(r, tasksNamed(12), nil, 5, false)
	if err != nil || !slices.Equal(ids(leader), []string{"t00", "t01", "t02", "t03", "t04"}) {
		t.Fatalf("leader took %v (%v), want the head", ids(leader), err)
	}
	second, drained, _ := sh.take(r, 5, false)
	third, _, _ := sh.take(r, 5, false)
	if !slices.Equal(ids(second), []string{"t05", "t06", "t07", "t08", "t09"}) || drained || len(third) != 2 {
		t.Fatalf("waiters took %v then %v", ids(second), ids(third))
	}
	if rest, drained, _ := sh.take(r, 5, false); len(rest) != 0 || !drained {
		t.Fatalf("an emptied read must report drained, got %v drained=%v", ids(rest), drained)
	}
	if next, lead := sh.current("k", 5); !lead || next == r {
		t.Fatal("an emptied read must not be reused")
	}
}

// A read that found nothing is an answer (no tasks), not a drained read to retry; a failed read
// fails its waiters once and is never reused.
func TestEmptyAndFailedReads(t *testing.T) {
	sh := newCandidateShare()
	sh.join("k")
	r, _ := sh.current("k", 1)
	if _, err := sh.finish(r, nil, nil, 1, false); err != nil {
		t.Fatal(err)
	}
	if got, drained, err := sh.take(r, 1, false); len(got) != 0 || drained || err != nil {
		t.Fatalf("empty read: %v drained=%v err=%v", got, drained, err)
	}
	failed, _ := sh.current("k", 1)
	boom := errors.New("mongo down")
	if _, err := sh.finish(failed, nil, boom, 1, false); !errors.Is(err, boom) {
		t.Fatalf("leader got %v", err)
	}
	if _, _, err := sh.take(failed, 1, false); !errors.Is(err, boom) {
		t.Fatalf("waiter got %v, want the read's error", err)
	}
	if r, lead := sh.current("k", 1); !lead || r == failed {
		t.Fatal("a failed read must not be reused")
	}
}

// Leftovers of a finished read serve later pulls only while fresh, and only while some pull of
// the group is running: a client pulling alone always reads anew.
func TestLeftoversAreReusedOnlyWhileFreshAndGroupIsActive(t *testing.T) {
	sh := newCandidateShare()
	sh.join("k")
	r, _ := sh.current("k", 2)
	if _, err := sh.finish(r, tasksNamed(8), nil, 2, false); err != nil {
		t.Fatal(err)
	}
	if again, lead := sh.current("k", 2); lead || again != r {
		t.Fatal("a fresh read with tasks left must be reused")
	}
	sh.mu.Lock()
	r.finished = time.Now().Add(-maxReadReuse)
	sh.mu.Unlock()
	if again, lead := sh.current("k", 2); !lead || again == r {
		t.Fatal("a read older than maxReadReuse must not be reused")
	}
	sh.leave("k")
	if len(sh.groups) != 0 {
		t.Fatalf("groups left after the last pull: %d", len(sh.groups))
	}
}

// A read that overlaps a claim of the group's — begun while it is written, or answered from
// before it was — lists the claimed tasks again; they are not handed out again, where they
// would only lose the race to the claim. A read begun after the claim was written hands out
// whatever it lists.
func TestReadsDoNotHandOutTasksTheGroupIsClaiming(t *testing.T) {
	sh := newCandidateShare()
	sh.join("k")
	sh.join("k")
	all := tasksNamed(6)
	first, _ := sh.current("k", 6)
	a, err := sh.finish(first, slices.Clone(all[:4]), nil, 4, false)
	if err != nil || len(a) != 4 {
		t.Fatalf("pull A took %v (%v)", ids(a), err)
	}
	// A's claim is being written; its read has nothing left, so B reads again and the answer
	// still lists A's four.
	overlapping, lead := sh.current("k", 6)
	if !lead || overlapping == first {
		t.Fatal("an emptied read must not be reused")
	}
	b, err := sh.finish(overlapping, slices.Clone(all), nil, 1, false)
	if err != nil || !slices.Equal(ids(b), []string{"t04"}) {
		t.Fatalf("pull B took %v (%v), want t04: t00–t03 are being claimed by A", ids(b), err)
	}
	sh.claimed("k", a) // A's claim is written after the read began: still not handed out
	c, _, err := sh.take(overlapping, 6, false)
	if err != nil || !slices.Equal(ids(c), []string{"t05"}) {
		t.Fatalf("pull C took %v (%v), want t05", ids(c), err)
	}
	sh.claimed("k", b) // C's claim is still being written
	after, lead := sh.current("k", 6)
	if !lead {
		t.Fatal("an emptied read must not be reused")
	}
	d, err := sh.finish(after, []*Task{all[0], all[4], all[5]}, nil, 6, false)
	if err != nil || !slices.Equal(ids(d), []string{"t00", "t04"}) {
		t.Fatalf("a read begun after A's and B's claims were written took %v (%v), want t00 and t04 (t05 is C's, in flight)", ids(d), err)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if n := len(sh.groups["k"].claims); n != 3 {
		t.Fatalf("%d claims remembered, want C's in flight and the 2 handed out since the last read began", n)
	}
}

// The filters of two pulls share reads only when every field but the limit is equal.
func TestShareKeyIgnoresOnlyTheLimit(t *testing.T) {
	q := "q1"
	a := PullFilter{ProjectID: "p", QueueID: &q, Tags: []string{"x"}, Limit: 5}
	b := a
	b.Limit = 50
	if a.shareKey() != b.shareKey() {
		t.Fatal("filters differing only in limit must share")
	}
	for _, c := range []PullFilter{{ProjectID: "p", Limit: 5}, {ProjectID: "p", QueueID: &q, Tags: []string{"y"}}, {ProjectID: "p", QueueID: &q, Tags: []string{"x"}, Priority: 3}} {
		if c.shareKey() == a.shareKey() {
			t.Fatalf("%+v must not share with %+v", c, a)
		}
	}
}

// Many concurrent pulls of one project in one process each get a disjoint part and, between
// them, every task.
func TestConcurrentPullsOnTheStoreAreDisjoint(t *testing.T) {
	f := newFixture(t)
	const total, pullers, limit = 120, 12, 10
	f.seedServerTasks("p", total)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range pullers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.svc.Pull(f.ctx, Actor{Name: fmt.Sprint("w", i)}, PullFilter{ProjectID: "p", Limit: limit})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, task := range r.Tasks {
				seen[task.TaskID]++
			}
		}()
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("task %s delivered %d times", id, n)
		}
	}
	if len(seen) != total {
		t.Fatalf("%d pulls of %d delivered %d tasks, want all %d", pullers, limit, len(seen), total)
	}
}

// Pulls in one process lose no claim to each other, also when a read overlaps claims still
// being written (each write takes 30 ms here): every statement they send applies.
func TestConcurrentPullsInOneProcessLoseNoClaim(t *testing.T) {
	f := newFixture(t)
	const total, pullers, limit = 200, 8, 10
	f.seedServerTasks("p", total)
	f.fault.down = func(method string) error {
		if method == "WriteTasks" {
			time.Sleep(30 * time.Millisecond)
		}
		return nil
	}
	var delivered atomic.Int64
	var wg sync.WaitGroup
	for i := range pullers {
		wg.Go(func() {
			for {
				r, err := f.svc.Pull(f.ctx, Actor{Name: fmt.Sprint("w", i)}, PullFilter{ProjectID: "p", Limit: limit})
				if err != nil {
					t.Error(err)
					return
				}
				if len(r.Tasks) == 0 {
					return
				}
				delivered.Add(int64(len(r.Tasks)))
			}
		})
	}
	wg.Wait()
	statements, won := f.fault.statements.Load(), f.fault.won.Load()
	if delivered.Load() != total || won != total || statements != won {
		t.Fatalf("delivered %d of %d; %d claim statements, %d applied: want every statement to apply", delivered.Load(), total, statements, won)
	}
}

// A later round may take candidates read after this pull's lease was stamped; a task whose
// lease is still valid at the stamp is left for a later pull.
func TestExpiredByKeepsOnlyTasksWhoseLeaseEndedByTheStamp(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease, before, after := "l", at.Add(-time.Second), at.Add(time.Second)
	batch := []*Task{
		{TaskID: "fresh"},
		{TaskID: "ended", LeaseID: &lease, LeaseExpiresAt: &before},
		{TaskID: "live", LeaseID: &lease, LeaseExpiresAt: &after},
		{TaskID: "now", LeaseID: &lease, LeaseExpiresAt: &at},
	}
	if got := ids(expiredBy(batch, at)); !slices.Equal(got, []string{"fresh", "ended", "now"}) {
		t.Fatalf("claimable %v", got)
	}
}
