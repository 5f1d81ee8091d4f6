package taskecho

import (
	"context"
	"slices"
	"time"
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

// Release gives a pulled task back (POST /api/v1/projects/{projectId}/tasks/{taskId}/pull/release): the lease ends with reason client and the task becomes
// pullable again. leaseID is optional for TaskEcho clients; when given it must be current (409).
func (s *Leases) Release(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	return s.endLease(ctx, actor, "release", ref, leaseID, false)
}

// Confirm ends a lease successfully (the client has processed the task without pushing it
// back): the entry gets pushed_at, the task keeps pulled_at and is not handed out again until the
// server resets it. leaseID is required.
func (s *Leases) Confirm(ctx context.Context, actor Actor, ref TaskRef, leaseID string) (*Task, time.Time, error) {
	if leaseID == "" {
		return nil, s.now(), invalid("lease_id", "lease_id 不能为空")
	}
	return s.endLease(ctx, actor, "confirm", ref, leaseID, true)
}

// endLease ends the lease of the task ref names for its holder: released (the task is pullable
// again) or, with success, confirmed (the entry gets pushed_at and the task keeps its pull marks).
func (s *Leases) endLease(ctx context.Context, actor Actor, op string, ref TaskRef, leaseID string, success bool) (*Task, time.Time, error) {
	var closed *Task
	now := s.now()
	t, err := s.writeTaskWhere(ctx, op, func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (Fields, *time.Time, error) {
			now = s.now()
			if err := leaseEndError(t, leaseID, now); err != nil {
				return nil, nil, err
			}
			closed = t
			// The lease must still be live when the write applies, not only when it was decided.
			at := now
			return closeLeaseSet(t, now, actor.Name, ReleaseClient, success, success), &at, nil
		})
	if err != nil {
		return nil, now, err
	}
	s.observeClose(closed, now, ReleaseClient, success)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: op, ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"lease_id": deref(closed.LeaseID)}})
	return t, now, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
