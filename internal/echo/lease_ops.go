package echo

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

// ReleaseBatch releases each task in turn (PL4). Every task is its own guarded write; a failure
// of one does not stop the others.
func (s *Service) ReleaseBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) []BatchItem {
	out := make([]BatchItem, 0, len(taskIDs))
	for _, id := range taskIDs {
		_, at, err := s.Release(ctx, actor, TaskRef{ProjectID: projectID, TaskID: id, AnyQueue: true}, leaseID)
		out = append(out, BatchItem{TaskID: id, At: at, Err: err})
	}
	return out
}

// ConfirmBatch confirms the tasks of one lease: the listed ids, or every task still holding
// the lease when taskIDs is empty.
func (s *Service) ConfirmBatch(ctx context.Context, actor Actor, projectID string, taskIDs []string, leaseID string) ([]BatchItem, error) {
	if leaseID == "" {
		return nil, invalid("lease_id", "lease_id 不能为空")
	}
	refs := make([]TaskRef, 0, len(taskIDs))
	for _, id := range taskIDs {
		refs = append(refs, TaskRef{ProjectID: projectID, TaskID: id, AnyQueue: true})
	}
	if len(taskIDs) == 0 {
		var held []*Task
		cur, err := s.tasks.Find(ctx, bson.M{"lease_id": leaseID, "project_id": projectID})
		if err != nil {
			return nil, wrap("find leased tasks", err)
		}
		if err := cur.All(ctx, &held); err != nil {
			return nil, wrap("read leased tasks", err)
		}
		for _, t := range held {
			refs = append(refs, TaskRef{ProjectID: projectID, TaskID: t.TaskID, QueueID: t.QueueID})
		}
	}
	out := make([]BatchItem, 0, len(refs))
	for _, ref := range refs {
		_, at, err := s.Confirm(ctx, actor, ref, leaseID)
		out = append(out, BatchItem{TaskID: ref.TaskID, At: at, Err: err})
	}
	return out, nil
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
