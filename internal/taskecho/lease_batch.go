package taskecho

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// A batch release or confirm settles its list with a number of commands that does not grow with
// the list: one read of the listed tasks, one guarded bulk write of the leases it may end and one
// audit insert. Every id gets the answer the one-task call would give it, decided from that read;
// a call naming a lease that has expired ends nothing and answers LEASE_EXPIRED as a whole. A
// lease never holds more tasks than a pull hands out, so a longer list is refused at once.

// BatchItem is one task of a batch release/confirm: done at At, or failed with the reason and
// the domain error kind (so a caller can tell a stale or expired lease from a missing task).
type BatchItem struct {
	TaskID string
	At     time.Time
	Err    error
}

// leaseBatch is one batch call: end leaseID ("" for TaskEcho's release: whatever lease each task
// holds) on the listed tasks of project, confirming them when success.
type leaseBatch struct {
	op      string
	actor   Actor
	project string
	ids     []string
	leaseID string
	success bool
}

// ReleaseBatch releases the listed tasks (POST /api/v1/projects/{projectId}/tasks/pull/release/batch); a failure of one does not stop the others. With
// a lease_id each task must hold that lease; without one (TaskEcho clients) its own lease ends.
func (s *Leases) ReleaseBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) ([]BatchItem, error) {
	return s.settleBatch(ctx, leaseBatch{op: "release", actor: actor, project: projectID, ids: taskIDs, leaseID: leaseID})
}

// ConfirmBatch confirms the tasks of one lease: the listed ids, or every task still holding
// the lease when taskIDs is empty.
func (s *Leases) ConfirmBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) ([]BatchItem, error) {
	if leaseID == "" {
		return nil, invalid("lease_id", "lease_id 不能为空")
	}
	return s.settleBatch(ctx, leaseBatch{op: "confirm", actor: actor, project: projectID, ids: taskIDs, leaseID: leaseID, success: true})
}

// errBatchTooLong refuses a list longer than any lease holds.
func errBatchTooLong(limit int) *Error {
	e := invalid("taskIds", fmt.Sprintf("taskIds 最多 %d 个（一次拉取的上限 pull_batch_size）", limit))
	e.Details["limit"] = limit
	return e
}

// settleBatch ends the leases of b's tasks (every task holding b.leaseID when b.ids is empty) and
// answers each listed id, in list order. A statement that loses its guard — a concurrent writer
// changed the task, or the lease expired between the read and the write — is read and decided
// again, for at most maxWriteAttempts rounds of a read and a write.
func (s *Leases) settleBatch(ctx context.Context, b leaseBatch) ([]BatchItem, error) {
	if len(b.ids) > s.set.PullBatchSize {
		return nil, errBatchTooLong(s.set.PullBatchSize)
	}
	tasks, err := s.firstBatchRead(ctx, &b)
	if err != nil {
		return nil, err
	}
	answers := make(map[string]BatchItem, len(b.ids))
	var won []*Task
	open := uniqueIDs(b.ids)
	for round := 0; len(open) > 0; round++ {
		if round == maxWriteAttempts {
			for _, id := range open {
				answers[id] = BatchItem{TaskID: id, Err: conflict("任务正在被并发修改，请重试", map[string]any{"reason": errContended.Error()})}
			}
			break
		}
		if round > 0 {
			if tasks, err = s.listedTasks(ctx, b.project, open); err != nil {
				return nil, err
			}
		}
		got, lost, err := s.settleRound(ctx, b, tasks, open, answers)
		if err != nil {
			return nil, err
		}
		won, open = append(won, got...), lost
	}
	if err := expiredCall(b, won, answers); err != nil {
		return nil, err
	}
	s.recordBatch(ctx, b, won)
	return batchItems(b, answers), nil
}

// expiredCall is the whole call's 409 LEASE_EXPIRED when it named a lease that had expired and
// ended no lease; a call that ended some answers per task instead.
func expiredCall(b leaseBatch, won []*Task, answers map[string]BatchItem) error {
	if b.leaseID == "" || len(won) > 0 {
		return nil
	}
	var expired []string
	for _, id := range uniqueIDs(b.ids) {
		if IsKind(answers[id].Err, KindLeaseExpired) {
			expired = append(expired, id)
		}
	}
	if len(expired) == 0 {
		return nil
	}
	return &Error{Kind: KindLeaseExpired, Message: msgLeaseExpired, Details: map[string]any{
		"lease_id": b.leaseID, "task_ids": expired,
	}}
}

// firstBatchRead reads the tasks the call names: the listed ids, or, when none are listed, the
// tasks holding the lease (whose ids then become the list).
func (s *Leases) firstBatchRead(ctx context.Context, b *leaseBatch) ([]*Task, error) {
	if len(b.ids) > 0 {
		return s.listedTasks(ctx, b.project, uniqueIDs(b.ids))
	}
	held, err := s.leaseTasks(ctx, b.project, b.leaseID)
	for _, t := range held {
		b.ids = append(b.ids, t.TaskID)
	}
	return held, err
}

// settleRound decides each open id on tasks (a read of them) and writes the leases it may end in
// one guarded bulk write. Answers of decided ids go into answers; it returns the tasks whose
// lease it ended and the ids whose statement lost its guard.
func (s *Leases) settleRound(ctx context.Context, b leaseBatch, tasks []*Task, open []string, answers map[string]BatchItem) (won []*Task, lost []string, err error) {
	now := s.now()
	byID := listedByID(tasks, b.leaseID)
	var ups []TaskWrite
	for _, id := range open {
		t := byID[id]
		if t == nil {
			answers[id] = BatchItem{TaskID: id, Err: taskNotFound(map[string]any{"project_id": b.project, "task_id": id})}
			continue
		}
		if err := leaseEndError(t, b.leaseID, now); err != nil {
			answers[id] = BatchItem{TaskID: id, Err: err}
			continue
		}
		ups = append(ups, TaskWrite{Task: t, Set: closeLeaseSet(t, now, b.actor.Name, ReleaseClient, b.success, b.success)})
	}
	if len(ups) == 0 {
		return nil, nil, nil
	}
	if s.beforeLeaseWrite != nil {
		if err := s.beforeLeaseWrite(); err != nil {
			return nil, nil, wrap(b.op+" leases", err)
		}
	}
	// The lease must be unexpired when the write is sent, not only when the read was decided.
	sent := s.now()
	for i := range ups {
		ups[i].LeaseLiveAt = &sent
	}
	if won, err = s.store.WriteTasks(ctx, b.op+" leases", ups); err != nil {
		return nil, nil, err
	}
	for _, t := range won {
		s.observeClose(t, now, ReleaseClient, b.success)
	}
	return won, settleAnswers(ups, won, now, answers), nil
}

// settleAnswers answers the ids whose lease was ended (at now) and returns those whose statement
// matched nothing.
func settleAnswers(ups []TaskWrite, won []*Task, now time.Time, answers map[string]BatchItem) (lost []string) {
	ended := make(map[ID]bool, len(won))
	for _, t := range won {
		ended[t.ID] = true
	}
	for _, u := range ups {
		if ended[u.Task.ID] {
			answers[u.Task.TaskID] = BatchItem{TaskID: u.Task.TaskID, At: now}
		} else {
			lost = append(lost, u.Task.TaskID)
		}
	}
	return lost
}

// recordBatch audits the leases a batch ended.
func (s *Leases) recordBatch(ctx context.Context, b leaseBatch, won []*Task) {
	if len(won) == 0 {
		return
	}
	s.recordAudit(ctx, AuditEntry{Actor: b.actor.Name, Action: b.op, ProjectID: b.project, TaskIDs: taskIDs(won),
		Count: len(won), Details: map[string]any{"lease_id": b.leaseID}})
}

// batchItems lists the answers in the order of b.ids. An id listed again gets what a second call
// would: the first one's error, or, once its lease ended, a stale lease (not pulled without one).
func batchItems(b leaseBatch, answers map[string]BatchItem) []BatchItem {
	out := make([]BatchItem, 0, len(b.ids))
	seen := make(map[string]bool, len(b.ids))
	for _, id := range b.ids {
		a := answers[id]
		if seen[id] && a.Err == nil {
			a = BatchItem{TaskID: id, Err: errNotPulled()}
			if b.leaseID != "" {
				a.Err = errStaleLease(&Task{TaskID: id}, b.leaseID)
			}
		}
		seen[id] = true
		out = append(out, a)
	}
	return out
}

// listedTasks reads the live tasks of project whose task_id is among ids, in every queue.
func (s *Leases) listedTasks(ctx context.Context, projectID string, ids []string) ([]*Task, error) {
	ts, err := s.store.ListedTasks(ctx, projectID, ids)
	return ts, wrap("find listed tasks", err)
}

// leaseTasks reads the tasks of project that hold lease leaseID and are not deleted (a deleted
// task keeps its lease, but the call answers it 404).
func (s *Leases) leaseTasks(ctx context.Context, projectID, leaseID string) ([]*Task, error) {
	ts, err := s.store.LeaseTasks(ctx, projectID, leaseID)
	return ts, wrap("find leased tasks", err)
}

// listedByID picks, for each task id, the task a batch call means when several queues hold one
// of that id: the one holding leaseID, else one whose history names it, else the one the
// one-task route addresses (the project-level task, else the first queue's in queue_id order).
func listedByID(tasks []*Task, leaseID string) map[string]*Task {
	out := make(map[string]*Task, len(tasks))
	for _, t := range tasks {
		if cur := out[t.TaskID]; cur == nil || preferredFor(leaseID, t, cur) {
			out[t.TaskID] = t
		}
	}
	return out
}

// preferredFor reports whether a call with leaseID means a rather than b (two tasks of one id).
func preferredFor(leaseID string, a, b *Task) bool {
	if ra, rb := candidateRank(a, leaseID), candidateRank(b, leaseID); ra != rb {
		return ra < rb
	}
	return a.QueueID != nil && b.QueueID != nil && *a.QueueID < *b.QueueID
}

// candidateRank ranks a task for listedByID, lower first.
func candidateRank(t *Task, leaseID string) int {
	switch {
	case leaseID != "" && t.LeaseID != nil && *t.LeaseID == leaseID:
		return 0
	case leaseID != "" && slices.ContainsFunc(t.PullHistory, func(e PullEntry) bool { return e.LeaseID == leaseID }):
		return 1
	case t.QueueID == nil:
		return 2
	default:
		return 3
	}
}

// uniqueIDs is ids without repeats, in first-seen order.
func uniqueIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
