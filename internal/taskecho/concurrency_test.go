package taskecho

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// concurrencyTasks is the size of the concurrency tests' queue: the acceptance size, 10,000, in
// `make chaos` (build tag chaos), 1,000 in `make test` (see soak_*_test.go), unless
// ECHO_CONCURRENCY_TASKS says otherwise.
func concurrencyTasks(t *testing.T) int {
	if v := os.Getenv("ECHO_CONCURRENCY_TASKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ECHO_CONCURRENCY_TASKS=%q is not a positive integer", v)
		}
		return n
	}
	return soakTasks
}

// seedServerTasks inserts n pullable server tasks in one insertMany (faster than the API path).
func (f *fixture) seedServerTasks(project string, n int) {
	f.t.Helper()
	docs := make([]any, n)
	for i := range docs {
		id := fmt.Sprintf("t%05d", i)
		at := f.now.Add(time.Duration(i) * time.Millisecond)
		docs[i] = &Task{Key: TaskKey(project, nil, id), ProjectID: project, TaskID: id, Name: id, Prompt: id,
			SpecFile: []string{}, Status: StatusPending, Tags: []string{}, Source: SourceServer, CreatedAt: at,
			UpdatedAt: at, ServerModifiedAt: &at, PullHistory: []PullEntry{}, Messages: []Message{}, Logs: []LogEntry{}}
	}
	if _, err := f.svc.tasks.InsertMany(f.ctx, docs); err != nil {
		f.t.Fatal(err)
	}
}

// drain runs pullers concurrently until each has seen three empty pulls in a row and returns how
// often each task id was delivered. onBatch, when set, handles each batch (e.g. confirms it).
func (f *fixture) drain(project string, pullers, limit int, onBatch func(*PullResult)) map[string]int {
	f.t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, pullers)
	for p := range pullers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for empty := 0; empty < 3; {
				r, err := f.svc.Pull(f.ctx, Actor{Name: fmt.Sprintf("puller-%d", p)}, PullFilter{ProjectID: project, Limit: limit})
				if err != nil {
					errs <- err
					return
				}
				if len(r.Tasks) == 0 {
					empty++
					continue
				}
				empty = 0
				mu.Lock()
				inBatch := make(map[string]bool, len(r.Tasks))
				for _, t := range r.Tasks {
					if inBatch[t.TaskID] {
						f.t.Errorf("lease %s pulled at %s lists task %s twice (rev %d)", r.LeaseID, r.PulledAt, t.TaskID, t.Rev)
					}
					inBatch[t.TaskID] = true
					seen[t.TaskID]++
				}
				mu.Unlock()
				if onBatch != nil {
					onBatch(r)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Fatal(err)
	}
	return seen
}

func TestConcurrentPullersReceiveEveryTaskExactlyOnce(t *testing.T) {
	const pullers, limit = 32, 50
	total := concurrencyTasks(t)
	f := newFixtureOn(t, patientMongo(t))
	f.seedServerTasks("big", total)
	start := time.Now()
	seen := f.drain("big", pullers, limit, nil)
	t.Logf("%d pullers drained %d tasks in %s", pullers, total, time.Since(start))
	if len(seen) != total {
		t.Fatalf("delivered %d distinct tasks, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("task %s delivered %d times", id, n)
		}
	}
}

func TestLeaseExpiringMidRunIsRedeliveredOnceWithTimeout(t *testing.T) {
	const pullers, limit = 32, 50
	total := concurrencyTasks(t)
	f := newFixtureOn(t, patientMongo(t))
	f.seedServerTasks("exp", total)
	var clockMu sync.Mutex
	f.svc.SetClock(func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return f.now })
	// The first batch is lost by its puller (never confirmed). Every other batch leased before
	// the jump is confirmed as soon as it arrives. After the third batch the clock jumps past the
	// lease timeout, mid-run. Leases stamped after the jump outlive the run, so confirming them
	// would change nothing the test observes; they are left open.
	var mu sync.Mutex
	var lost *PullResult
	var jumped time.Time
	batches := 0
	staleConfirms := map[string]bool{} // not settled by their confirm: legitimately redelivered
	seen := f.drain("exp", pullers, limit, func(r *PullResult) {
		mu.Lock()
		batches++
		first, jump := lost == nil, batches == 3
		if first {
			lost = r
		}
		if jump {
			clockMu.Lock()
			f.now = f.now.Add(f.svc.Settings().PullTimeout + time.Minute)
			jumped = f.now
			clockMu.Unlock()
		}
		afterJump := !jumped.IsZero() && !r.PulledAt.Before(jumped)
		mu.Unlock()
		if first || afterJump {
			return
		}
		items, err := f.svc.ConfirmBatch(f.ctx, Actor{Name: "puller"}, "exp", nil, r.LeaseID)
		if err != nil && !IsKind(err, KindLeaseExpired) {
			t.Error(err)
			return
		}
		// A task the confirm did not settle had its lease expire before the confirm (which then
		// answers LEASE_EXPIRED and ends nothing), so it may be re-pulled: its second delivery is
		// the lease timeout working. A settled task is never pullable again, so it must have been
		// delivered once.
		confirmed := map[string]bool{}
		for _, it := range items {
			if it.Err == nil {
				confirmed[it.TaskID] = true
			}
		}
		mu.Lock()
		for _, task := range r.Tasks {
			if !confirmed[task.TaskID] {
				staleConfirms[task.TaskID] = true
			}
		}
		mu.Unlock()
	})
	if len(seen) != total {
		t.Fatalf("delivered %d distinct tasks, want %d", len(seen), total)
	}
	lostIDs := map[string]bool{}
	for _, task := range lost.Tasks {
		lostIDs[task.TaskID] = true
	}
	for id, n := range seen {
		switch {
		case lostIDs[id] && n != 2:
			t.Fatalf("lost task %s delivered %d times, want exactly 2", id, n)
		case !lostIDs[id] && !staleConfirms[id] && n != 1:
			t.Fatalf("task %s delivered %d times, want 1", id, n)
		case n > 2:
			t.Fatalf("task %s delivered %d times", id, n)
		}
	}
	for id := range lostIDs {
		task, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "exp", TaskID: id}, false)
		if err != nil {
			t.Fatal(err)
		}
		h := task.PullHistory
		if len(h) != 2 || h[0].LeaseID != lost.LeaseID || deref(h[0].Reason) != ReleaseTimeout || deref(h[0].ReleasedBy) != ReleasedByTimeout {
			t.Fatalf("task %s history %+v, want the lost lease closed by timeout", id, h)
		}
	}
}
