package taskecho

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

// Concurrent pulls with the same filter in one process share their candidate reads. Without
// sharing, 32 clients polling one project each read the head of the same queue and then race
// for it: every puller but one loses its guarded writes and reads again, so draining a queue
// costs reads and lost writes in proportion to the pullers, on any database. Now one read serves
// every pull waiting for it and each takes a disjoint part, so pulls in one process do not lose
// to each other; the revision guard still arbitrates between processes. A group lives only while a pull with its filter
// runs, so a client pulling alone reads the database as of its own call.
//
// A read that begins while another pull's claim is being written, or that was answered from
// before that claim was written, still lists the claimed tasks: handing them out again would
// only lose the race (a lost statement, a find by the write's marker, another round). So the
// group remembers the tasks its pulls are claiming, and those claimed since its newest read
// began, and no read hands them out.

// maxReadReuse bounds how old a finished read may be and still hand out its leftovers, so a
// steady stream of pulls cannot keep serving a stale head of the queue.
const maxReadReuse = time.Second

// maxShareAttempts bounds how often one round joins a read that others emptied first.
const maxShareAttempts = 3

type candidateShare struct {
	mu     sync.Mutex
	groups map[string]*candidateGroup
}

// candidateGroup is the pulls with one filter now running and their newest read.
type candidateGroup struct {
	active int
	read   *candidateRead
	// claims holds each task handed out to a pull of the group: the zero time while its claim is
	// being written, then when the write answered, until a read begins after that.
	claims map[ID]time.Time
}

// candidateRead is one find of pull candidates. Its fields are guarded by candidateShare.mu.
type candidateRead struct {
	group    *candidateGroup
	window   int
	started  time.Time
	done     chan struct{} // closed when the find has answered
	finished time.Time
	tasks    []*Task // not handed out yet, in pull order
	found    int
	err      error
}

func newCandidateShare() *candidateShare {
	return &candidateShare{groups: map[string]*candidateGroup{}}
}

// shareKey identifies pulls that may share reads: every filter field but the limit.
func (f PullFilter) shareKey() string {
	f.Limit = 0
	b, err := json.Marshal(f)
	if err != nil {
		return "unshared " + newLeaseID() // a group of its own
	}
	return string(b)
}

func (sh *candidateShare) join(key string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	g := sh.groups[key]
	if g == nil {
		g = &candidateGroup{claims: map[ID]time.Time{}}
		sh.groups[key] = g
	}
	g.active++
}

func (sh *candidateShare) leave(key string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if g := sh.groups[key]; g != nil {
		if g.active--; g.active == 0 {
			delete(sh.groups, key)
		}
	}
}

// current returns the read a pull of group key takes from: one in flight, or a recent one with
// tasks left. Otherwise it registers a new read sized for the group, which the caller performs.
func (sh *candidateShare) current(key string, need int) (r *candidateRead, lead bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	g := sh.groups[key]
	if r := g.read; r != nil && (r.finished.IsZero() || r.err == nil && len(r.tasks) > 0 && time.Since(r.finished) < maxReadReuse) {
		return r, false
	}
	r = &candidateRead{group: g, started: time.Now(), done: make(chan struct{}), window: min(need*claimWindowFactor*g.active, maxClaimWindow)}
	g.read = r
	// Claims written before this read began are in what it will see.
	maps.DeleteFunc(g.claims, func(_ ID, written time.Time) bool { return !written.IsZero() })
	return r, true
}

// claimed records that the claim of batch, handed out to a pull of group key, was written (or
// failed): from now on a read that begins sees it.
func (sh *candidateShare) claimed(key string, batch []*Task) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	g := sh.groups[key]
	now := time.Now()
	for _, t := range batch {
		g.claims[t.ID] = now
	}
}

// finish records the answer of r's find, takes the leader's part and then wakes the waiters.
func (sh *candidateShare) finish(r *candidateRead, tasks []*Task, err error, need int, contended bool) ([]*Task, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r.tasks, r.found, r.err, r.finished = tasks, len(tasks), err, time.Now()
	close(r.done)
	return r.takeLocked(need, contended)
}

// take hands out the next part of finished read r; drained reports that others took it all.
func (sh *candidateShare) take(r *candidateRead, need int, contended bool) (batch []*Task, drained bool, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	batch, err = r.takeLocked(need, contended)
	return batch, err == nil && len(batch) == 0 && r.found > 0, err
}

func (r *candidateRead) takeLocked(need int, contended bool) ([]*Task, error) {
	if r.err != nil {
		return nil, r.err
	}
	claims := r.group.claims
	r.tasks = slices.DeleteFunc(r.tasks, func(t *Task) bool {
		written, ok := claims[t.ID]
		return ok && (written.IsZero() || written.After(r.started))
	})
	batch, rest := nextBatch(r.tasks, need, contended)
	r.tasks = rest
	for _, t := range batch {
		claims[t.ID] = time.Time{}
	}
	return slices.Clone(batch), nil
}

// candidates returns up to need tasks for a pull of filter f to claim, from a read shared with
// the concurrent pulls of the same filter or, when none is usable, from a read of its own.
func (s *Leases) candidates(ctx context.Context, key string, f PullFilter, now time.Time, need int, contended bool) ([]*Task, error) {
	for attempt := 1; ; attempt++ {
		r, lead := s.share.current(key, need)
		if lead {
			tasks, err := s.pullCandidates(ctx, f, now, r.window)
			return s.share.finish(r, tasks, err, need, contended)
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		batch, drained, err := s.share.take(r, need, contended)
		if !drained || attempt == maxShareAttempts {
			return batch, err
		}
	}
}
