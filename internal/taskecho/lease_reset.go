package taskecho

import (
	"context"
	"time"
)

// ResetPull is the admin's manual reset (POST /api/v1/projects/{projectId}/tasks/{taskId}/pull/reset): an open lease ends with reason server and the task
// becomes pullable; a task that was not pulled is left as it is.
func (s *Leases) ResetPull(ctx context.Context, actor Actor, ref TaskRef) (*Task, time.Time, error) {
	now := s.now()
	var closed *Task
	t, err := s.writeTask(ctx, "pull-reset", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (Fields, error) {
			if t.PulledAt == nil && t.LeaseID == nil {
				return nil, nil
			}
			closed = t
			return closeLeaseSet(t, now, actor.Name, ReleaseServer, false, false), nil
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
