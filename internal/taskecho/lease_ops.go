package taskecho

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// errStaleLease is the 409 a release or confirm gets when its lease_id is no longer the task's.
func errStaleLease(t *Task, leaseID string) *Error {
	return conflict("lease_id 已失效：任务已被重新拉取、释放或修改", map[string]any{
		"task_id": t.TaskID, "lease_id": leaseID,
	})
}

// checkLease enforces the fencing token: given (non-empty) it must be the task's current lease.
func checkLease(t *Task, leaseID string) error {
	if t.LeaseID == nil {
		if leaseID != "" {
			return errStaleLease(t, leaseID)
		}
		return invalid("task_id", "任务未被拉取，无需释放")
	}
	if leaseID != "" && *t.LeaseID != leaseID {
		return errStaleLease(t, leaseID)
	}
	return nil
}

// Release gives a pulled task back (PL3): the lease ends with reason client and the task becomes
// pullable again. leaseID is optional for TaskEcho clients; when given it must be current (409).
func (s *Service) Release(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	now := s.now()
	var closed *Task
	t, err := s.writeTask(ctx, "release", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (bson.M, error) {
			if err := checkLease(t, leaseID); err != nil {
				return nil, err
			}
			closed = t
			return bson.M{"$set": closeLeaseSet(t, now, actor.Name, ReleaseClient, false, false)}, nil
		})
	if err != nil {
		return nil, now, err
	}
	s.observeClose(closed, now, ReleaseClient, false)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "release", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"lease_id": deref(closed.LeaseID)}})
	return t, now, nil
}

// Confirm ends a lease successfully (the client has processed the task without pushing it
// back): the entry gets pushed_at, the task keeps pulled_at and is not handed out again until the
// server resets it. leaseID is required.
func (s *Service) Confirm(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	now := s.now()
	if leaseID == "" {
		return nil, now, invalid("lease_id", "lease_id 不能为空")
	}
	var closed *Task
	t, err := s.writeTask(ctx, "confirm", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (bson.M, error) {
			if t.LeaseID == nil || *t.LeaseID != leaseID {
				return nil, errStaleLease(t, leaseID)
			}
			closed = t
			return bson.M{"$set": closeLeaseSet(t, now, actor.Name, ReleaseClient, true, true)}, nil
		})
	if err != nil {
		return nil, now, err
	}
	s.observeClose(closed, now, ReleaseClient, true)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "confirm", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"lease_id": leaseID}})
	return t, now, nil
}

// BatchItem is one task of a batch release/confirm: done, or failed with the reason and the
// domain error kind (so a caller can tell a stale lease from a missing task).
type BatchItem struct {
	TaskID string
	At     time.Time
	Err    error
}

// ReleaseBatch releases the listed tasks (PL4); a failure of one does not stop the others. With
// a lease_id it settles them in a few round trips (see closeBatch); without one (TaskEcho
// clients) each task is its own guarded write.
func (s *Service) ReleaseBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) ([]BatchItem, error) {
	single := func(ref TaskRef) (time.Time, error) {
		_, at, err := s.Release(ctx, actor, ref, leaseID)
		return at, err
	}
	if leaseID == "" {
		return answerBatch(projectID, taskIDs, nil, nil, time.Time{}, single), nil
	}
	return s.closeBatch(ctx, actor, "release", projectID, taskIDs, leaseID, false, single)
}

// ConfirmBatch confirms the tasks of one lease: the listed ids, or every task still holding
// the lease when taskIDs is empty.
func (s *Service) ConfirmBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) ([]BatchItem, error) {
	if leaseID == "" {
		return nil, invalid("lease_id", "lease_id 不能为空")
	}
	return s.closeBatch(ctx, actor, "confirm", projectID, taskIDs, leaseID, true,
		func(ref TaskRef) (time.Time, error) {
			_, at, err := s.Confirm(ctx, actor, ref, leaseID)
			return at, err
		})
}

// closeBatch ends lease leaseID on the listed tasks (all the lease's tasks when ids is empty) in
// two round trips plus the audit insert: one read of the lease's tasks and one guarded bulk write. A task that
// path cannot settle — not held by the lease, listed twice, or changed by a concurrent writer
// since the read — goes through single, the one-task operation, which gives it its exact answer
// (404, 409 or done). Items are in the order of ids, or of the read.
func (s *Service) closeBatch(ctx context.Context, actor Actor, op, projectID string, ids []string, leaseID string,
	success bool, single func(TaskRef) (time.Time, error)) ([]BatchItem, error) {
	now := s.now()
	held, err := s.leaseTasks(ctx, projectID, leaseID)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		for _, t := range held {
			ids = append(ids, t.TaskID)
		}
	}
	byID := make(map[string]*Task, len(held))
	for _, t := range held {
		byID[t.TaskID] = t
	}
	var batch []*Task
	for _, id := range ids {
		if t := byID[id]; t != nil {
			batch = append(batch, t)
			delete(byID, id)
		}
	}
	ups := make([]taskUpdate, len(batch))
	for i, t := range batch {
		ups[i] = taskUpdate{task: t, update: bson.M{"$set": closeLeaseSet(t, now, actor.Name, ReleaseClient, success, success)}}
	}
	won, err := s.bulkGuarded(ctx, op+" leases", ups)
	if err != nil {
		return nil, err
	}
	for _, t := range won {
		s.observeClose(t, now, ReleaseClient, success)
	}
	if len(won) > 0 {
		s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: op, ProjectID: projectID, TaskIDs: taskIDs(won),
			Count: len(won), Details: map[string]any{"lease_id": leaseID}})
	}
	return answerBatch(projectID, ids, batch, won, now, single), nil
}

// answerBatch answers each id: done at now when its task is among won (once), else through single.
func answerBatch(projectID string, ids []string, batch, won []*Task, now time.Time,
	single func(TaskRef) (time.Time, error)) []BatchItem {
	settled := make(map[string]bool, len(won))
	for _, t := range won {
		settled[t.TaskID] = true
	}
	read := make(map[string]*Task, len(batch))
	for _, t := range batch {
		read[t.TaskID] = t
	}
	out := make([]BatchItem, 0, len(ids))
	for _, id := range ids {
		if settled[id] {
			out = append(out, BatchItem{TaskID: id, At: now})
			delete(settled, id)
			continue
		}
		ref := TaskRef{ProjectID: projectID, TaskID: id, AnyQueue: true}
		if t := read[id]; t != nil {
			ref = TaskRef{ProjectID: projectID, TaskID: id, QueueID: t.QueueID}
		}
		at, err := single(ref)
		out = append(out, BatchItem{TaskID: id, At: at, Err: err})
	}
	return out
}

// leaseTasks reads the tasks of project that hold lease leaseID and are not deleted (a deleted
// task keeps its lease, but single answers it 404).
func (s *Service) leaseTasks(ctx context.Context, projectID, leaseID string) ([]*Task, error) {
	return s.findTasks(ctx, "leased tasks", bson.M{"lease_id": leaseID, "project_id": projectID, "deleted_at": nil})
}

// ResetPull is the admin's manual reset (PL5): an open lease ends with reason server and the task
// becomes pullable; a task that was not pulled is left as it is.
func (s *Service) ResetPull(ctx context.Context, actor Actor, ref TaskRef) (*Task, time.Time, error) {
	now := s.now()
	var closed *Task
	t, err := s.writeTask(ctx, "pull-reset", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (bson.M, error) {
			if t.PulledAt == nil && t.LeaseID == nil {
				return nil, nil
			}
			closed = t
			return bson.M{"$set": closeLeaseSet(t, now, actor.Name, ReleaseServer, false, false)}, nil
		})
	if err != nil {
		return nil, now, err
	}
	if closed != nil {
		s.observeClose(closed, now, ReleaseServer, false)
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "pull-reset", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1})
	return t, now, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
