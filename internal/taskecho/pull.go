package taskecho

import (
	"bytes"
	"context"
	mathrand "math/rand/v2"
	"slices"
	"time"
)

// PullFilter selects the server tasks a pull may claim (the filters of GET …/tasks/pull).
type PullFilter struct {
	ProjectID string
	// QueueID is the one scope a pull reads: that queue's tasks, or, when nil, the project's own
	// tasks outside any queue (TaskEcho's project pull). A project pull never takes a queue's
	// task, so the queue's pullers are not starved by it.
	QueueID        *string
	Statuses       []string
	Tags           []string
	CreatedAfter   *time.Time
	CreatedBefore  *time.Time
	ModifiedAfter  *time.Time // also "since"
	ModifiedBefore *time.Time
	Priority       any
	TaskIDs        []string
	Limit          int
}

// PullResult is what one pull call claimed. All tasks share LeaseID.
type PullResult struct {
	LeaseID        string
	PulledAt       time.Time
	LeaseExpiresAt time.Time
	Tasks          []*Task
}

// claimWindowFactor: each round reads this many times the tasks still wanted, so that pullers
// racing for the same head of the queue find unclaimed tasks further down without a new query.
const claimWindowFactor = 4

// maxClaimWindow caps one candidate read.
const maxClaimWindow = 1000

// Leases is the pull side of the task server: a pull hands out tasks under a lease, and the
// lease ends by a release, a confirm, a push of the task, the admin's reset, or its expiry (the
// sweeper). Leases holds the candidate reads of the pulls now running in this process
// (pull_share.go); beforeLeaseWrite, when set (tests only), runs between a batch release or
// confirm's decision and its write, and an error ends the call there, as a crash would.
type Leases struct {
	*core
	share            *candidateShare
	beforeLeaseWrite func() error
}

// Pull claims up to f.Limit tasks for actor under one new lease. A round is one indexed find of
// candidates (or a part of one read shared with concurrent pulls of the same filter), one
// guarded bulk write setting the lease, and, only when some were lost, one find by the write's
// marker; it runs at most ClaimRounds rounds, so an uncontended pull of N costs three commands
// with the audit insert. Concurrent pullers never receive the same task, nor one pull a task
// twice: a task is handed out only by the statement whose revision guard matched.
func (s *Leases) Pull(ctx context.Context, actor Actor, f PullFilter) (*PullResult, error) {
	if len(f.TaskIDs) > s.set.PullBatchSize { // no pull hands out more, as for a batch release
		return nil, errBatchTooLong(s.set.PullBatchSize)
	}
	if f.Limit <= 0 || f.Limit > s.set.PullBatchSize {
		f.Limit = s.set.PullBatchSize
	}
	now := s.now()
	res := &PullResult{LeaseID: newLeaseID(), PulledAt: now, LeaseExpiresAt: now.Add(s.set.PullTimeout)}
	key := f.shareKey()
	s.share.join(key)
	defer s.share.leave(key)
	contended := false
	for round := 0; round < s.set.ClaimRounds && len(res.Tasks) < f.Limit; round++ {
		batch, err := s.candidates(ctx, key, f, now, f.Limit-len(res.Tasks), contended)
		if err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			break
		}
		if round == 0 {
			// The lease starts when its first tasks are handed out, which can be well after the
			// call began (it waited for a read shared with other pulls).
			res.PulledAt = s.now()
			res.LeaseExpiresAt = res.PulledAt.Add(s.set.PullTimeout)
		}
		claimable := expiredBy(slices.Clone(batch), res.PulledAt)
		got, err := s.claimForPull(ctx, actor, claimable, res)
		s.share.claimed(key, batch)
		if err != nil {
			return nil, err
		}
		contended = contended || len(got) < len(claimable)
		res.Tasks = append(res.Tasks, got...)
	}
	sortPullOrder(res.Tasks)
	if len(res.Tasks) > 0 {
		// Only a pull that handed something out names its project in the metrics: the project of
		// an empty pull may not exist (the API checks it afterwards).
		s.metrics.TasksPulled(f.ProjectID, len(res.Tasks))
		s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "pull", ProjectID: f.ProjectID, QueueID: f.QueueID,
			TaskIDs: taskIDs(res.Tasks), Count: len(res.Tasks), Details: map[string]any{"lease_id": res.LeaseID}})
	}
	return res, nil
}

// expiredBy drops the tasks whose current lease is still valid at at. A later round can take
// candidates from a read filtered at a later time than this pull's lease stamp; handing it a task
// whose lease expired after that stamp would give the task a new lease already over.
func expiredBy(batch []*Task, at time.Time) []*Task {
	return slices.DeleteFunc(batch, func(t *Task) bool {
		return t.LeaseID != nil && t.LeaseExpiresAt != nil && t.LeaseExpiresAt.After(at)
	})
}

// nextBatch takes the next need candidates from window. Uncontended, that is the head, so a
// lone puller gets strict priority order. Once a claim has been lost to another puller, all of
// them are racing for the same head; starting at a random point of the window spreads them out
// so each round wins something instead of losing the same race again.
func nextBatch(window []*Task, need int, contended bool) (batch, rest []*Task) {
	n := min(need, len(window))
	if !contended || n == len(window) {
		return window[:n], window[n:]
	}
	off := mathrand.IntN(len(window) - n + 1)
	batch = append([]*Task{}, window[off:off+n]...)
	rest = append(append([]*Task{}, window[:off]...), window[off+n:]...)
	return batch, rest
}

// pullCandidates reads up to window pullable tasks in pull order (the store's PullCandidates). A read of more than one batch
// is not isolated from the pulls claiming tasks meanwhile, and MongoDB documents that such a
// cursor "may return a document more than once if that document has changed"
// (https://www.mongodb.com/docs/manual/core/read-isolation-consistency-recency/#cursor-snapshot).
// A task listed twice would get two statements in one claim, so only its first listing is kept.
func (s *Leases) pullCandidates(ctx context.Context, f PullFilter, now time.Time, window int) ([]*Task, error) {
	tasks, err := s.store.PullCandidates(ctx, f, now, window)
	if err != nil {
		return nil, wrap("find pull candidates", err)
	}
	seen := make(map[ID]bool, len(tasks))
	return slices.DeleteFunc(tasks, func(t *Task) bool {
		dup := seen[t.ID]
		seen[t.ID] = true
		return dup
	}), nil
}

// claimForPull gives batch to the lease in res with one guarded bulk write (each statement
// filters on the revision the task was read at, so a task another puller took, or that changed,
// matches nothing) and returns the tasks whose statement applied, updated to what was written.
// Which applied is asked by the write's own marker (the store's WriteTasks), not by the lease: a later round
// of the same pull can list a task an earlier round already won, from a read made before that
// claim, and that task holds the lease although this round's statement for it matched nothing.
func (s *Leases) claimForPull(ctx context.Context, actor Actor, batch []*Task, res *PullResult) ([]*Task, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	entry := PullEntry{LeaseID: res.LeaseID, PulledAt: res.PulledAt, PulledBy: actor.Name}
	ups := make([]TaskWrite, len(batch))
	for i, t := range batch {
		set := Fields{"pulled_at": res.PulledAt, "pulled_by": actor.Name, "lease_id": res.LeaseID, "lease_expires_at": res.LeaseExpiresAt}
		ups[i] = TaskWrite{Task: t, Set: set}
		if t.LeaseID == nil {
			ups[i].PushHistory = &entry
		} else {
			// An expired lease: its history entry closes with reason timeout in the same write.
			set["pull_history"] = append(closedHistory(t, res.PulledAt, ReleasedByTimeout, ReleaseTimeout, false), entry)
		}
	}
	won, err := s.store.WriteTasks(ctx, "lease pulled tasks", ups)
	if err != nil {
		return nil, err
	}
	for _, t := range won {
		if t.LeaseID != nil {
			s.observeClose(t, res.PulledAt, ReleaseTimeout, false)
		}
		s.applyPull(t, entry, res)
	}
	return won, nil
}

func (s *Leases) applyPull(t *Task, entry PullEntry, res *PullResult) {
	if t.LeaseID != nil {
		t.PullHistory = closedHistory(t, res.PulledAt, ReleasedByTimeout, ReleaseTimeout, false)
	}
	t.PullHistory = append(t.PullHistory, entry)
	t.Rev++
	t.PulledAt, t.PulledBy = &res.PulledAt, &entry.PulledBy
	t.LeaseID, t.LeaseExpiresAt = &res.LeaseID, &res.LeaseExpiresAt
}

func taskIDs(ts []*Task) []string {
	const maxAuditIDs = 200
	out := make([]string, 0, min(len(ts), maxAuditIDs))
	for i, t := range ts {
		if i == maxAuditIDs {
			break
		}
		out = append(out, t.TaskID)
	}
	return out
}

// sortPullOrder orders tasks in pull order: highest priority first, then oldest; _id breaks ties
// so the order is total (the store's PullCandidates reads in the same order).
func sortPullOrder(ts []*Task) {
	slices.SortStableFunc(ts, func(a, b *Task) int {
		if a.PriorityRank != b.PriorityRank {
			return b.PriorityRank - a.PriorityRank
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}
