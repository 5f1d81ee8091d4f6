package taskecho

import (
	"context"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A lease ends at lease_expires_at, for every call: a pull already treats the task as free, and
// a release or confirm naming the lease afterwards answers LEASE_EXPIRED and changes nothing,
// whether or not a pull or the sweeper has ended the lease since. The write that ends a lease
// filters on the lease being unexpired at the instant of the write, so a call decided just before
// the expiry cannot end the lease after it.

// errStaleLease is the 409 a release or confirm gets when its lease_id is no longer the task's
// for another reason than its expiry (released, confirmed, reset, edited, or never this task's).
func errStaleLease(t *Task, leaseID string) *Error {
	return conflict("lease_id 已失效：任务已被重新拉取、释放或修改", map[string]any{
		"task_id": t.TaskID, "lease_id": leaseID,
	})
}

// errLeaseExpired is the 409 LEASE_EXPIRED a release or confirm gets when its lease has passed
// lease_expires_at.
func errLeaseExpired(t *Task, leaseID string) *Error {
	return &Error{Kind: KindLeaseExpired, Message: msgLeaseExpired, Details: map[string]any{
		"task_id": t.TaskID, "lease_id": leaseID,
	}}
}

// msgLeaseExpired is LEASE_EXPIRED's message, for one task or a whole batch call.
const msgLeaseExpired = "lease_id 已过期：拉取超时，任务可被重新拉取"

// errNotPulled is TaskEcho's answer to a release of a task no lease holds.
func errNotPulled() *Error { return invalid("task_id", "任务未被拉取，无需释放") }

// leaseEndError says why a call with leaseID may not end t's lease at now, or nil when it may.
// An empty leaseID (TaskEcho's release, which knows no leases) stands for the lease t holds.
func leaseEndError(t *Task, leaseID string, now time.Time) error {
	switch {
	case t.LeaseID != nil && (leaseID == "" || *t.LeaseID == leaseID):
		if !t.LeaseLive(now) {
			return errLeaseExpired(t, *t.LeaseID)
		}
		return nil
	case leaseID == "":
		return errNotPulled()
	case endedByTimeout(t, leaseID):
		return errLeaseExpired(t, leaseID)
	default:
		return errStaleLease(t, leaseID)
	}
}

// endedByTimeout reports whether t's history shows lease leaseID ended by its expiry (closed by
// the sweeper, or by the pull that took the task after it).
func endedByTimeout(t *Task, leaseID string) bool {
	for _, e := range slices.Backward(t.PullHistory) {
		if e.LeaseID == leaseID {
			return e.Reason != nil && *e.Reason == ReleaseTimeout
		}
	}
	return false
}

// liveLeaseGuard is the condition a write ending t's lease adds to its revision guard: t still
// holds that lease and it has not expired at now.
func liveLeaseGuard(t *Task, now time.Time) bson.M {
	return bson.M{"lease_id": *t.LeaseID, "lease_expires_at": bson.M{"$gt": now}}
}

// Release gives a pulled task back (PL3): the lease ends with reason client and the task becomes
// pullable again. leaseID is optional for TaskEcho clients; when given it must be current (409).
func (s *Service) Release(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	return s.endLease(ctx, actor, "release", ref, leaseID, false)
}

// Confirm ends a lease successfully (the client has processed the task without pushing it
// back): the entry gets pushed_at, the task keeps pulled_at and is not handed out again until the
// server resets it. leaseID is required.
func (s *Service) Confirm(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	if leaseID == "" {
		return nil, s.now(), invalid("lease_id", "lease_id 不能为空")
	}
	return s.endLease(ctx, actor, "confirm", ref, leaseID, true)
}

// endLease ends the lease of the task ref names for its holder: released (the task is pullable
// again) or, with success, confirmed (the entry gets pushed_at and the task keeps its pull marks).
func (s *Service) endLease(ctx context.Context, actor Actor, op string, ref TaskRef, leaseID string, success bool) (*Task, time.Time, error) {
	var closed *Task
	now := s.now()
	t, err := s.writeTaskWhere(ctx, op, func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (bson.M, bson.M, error) {
			now = s.now()
			if err := leaseEndError(t, leaseID, now); err != nil {
				return nil, nil, err
			}
			closed = t
			return bson.M{"$set": closeLeaseSet(t, now, actor.Name, ReleaseClient, success, success)}, liveLeaseGuard(t, now), nil
		})
	if err != nil {
		return nil, now, err
	}
	s.observeClose(closed, now, ReleaseClient, success)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: op, ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"lease_id": deref(closed.LeaseID)}})
	return t, now, nil
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
