package taskecho

import "context"

// ReleaseExpiredLeases ends up to batch leases whose pull_timeout has passed: the history entry
// closes with released_by "timeout" and reason timeout, and the task becomes pullable again. A
// pull may already have re-claimed an expired task (it closes the entry the same way); both
// guard on the revision they read, so only one of them applies. Returns how many were released.
func (s *Leases) ReleaseExpiredLeases(ctx context.Context, batch int) (int, error) {
	now := s.now()
	expired, err := s.store.ExpiredLeases(ctx, now, batch)
	if err != nil {
		return 0, wrap("find expired leases", err)
	}
	ups := make([]TaskWrite, len(expired))
	for i, t := range expired {
		ups[i] = TaskWrite{Task: t, Set: closeLeaseSet(t, now, ReleasedByTimeout, ReleaseTimeout, false, false)}
	}
	won, err := s.store.WriteTasks(ctx, "release expired leases", ups)
	if err != nil || len(won) == 0 {
		return 0, err
	}
	byProject := map[string][]*Task{}
	for _, t := range won {
		s.observeClose(t, now, ReleaseTimeout, false)
		byProject[t.ProjectID] = append(byProject[t.ProjectID], t)
	}
	for pid, ts := range byProject {
		s.recordAudit(ctx, AuditEntry{At: now, Actor: ReleasedByTimeout, Action: "lease-timeout", ProjectID: pid,
			TaskIDs: taskIDs(ts), Count: len(ts)})
	}
	return len(won), nil
}

// ExpireTasks applies task_expiry_time: unpulled server tasks past expires_at are archived
// (archived_at set; still listed, never pulled) or soft-deleted, per TaskExpiryAction.
func (s *Leases) ExpireTasks(ctx context.Context, batch int) (int, error) {
	now := s.now()
	tasks, err := s.store.ExpiredTasks(ctx, now, batch)
	if err != nil {
		return 0, wrap("find expired tasks", err)
	}
	set := Fields{"archived_at": now}
	if s.set.TaskExpiryAction == "delete" {
		set = Fields{"deleted_at": now, "deleted_reason": "expired"}
	}
	won, err := s.writeSame(ctx, "expire tasks", tasks, set)
	if err != nil || len(won) == 0 {
		return 0, err
	}
	byProject := map[string][]*Task{}
	for _, t := range won {
		byProject[t.ProjectID] = append(byProject[t.ProjectID], t)
	}
	for pid, ts := range byProject {
		s.recordAudit(ctx, AuditEntry{At: now, Actor: "expiry", Action: "task-expire-" + s.set.TaskExpiryAction,
			ProjectID: pid, TaskIDs: taskIDs(ts), Count: len(ts)})
	}
	return len(won), nil
}

// CountOverdueLeases counts leases past their timeout (before the sweeper releases them) and
// publishes the gauge.
func (s *Leases) CountOverdueLeases(ctx context.Context) (int, error) {
	n, err := s.store.CountExpiredLeases(ctx, s.now())
	if err != nil {
		return 0, wrap("count overdue leases", err)
	}
	s.metrics.OverdueLeases(n)
	return n, nil
}
