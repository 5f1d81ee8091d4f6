package taskecho

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ReleaseExpiredLeases ends up to batch leases whose pull_timeout has passed: the history entry
// closes with released_by "timeout" and reason timeout, and the task becomes pullable again. A
// pull may already have re-claimed an expired task (it closes the entry the same way); both
// guard on the revision they read, so only one of them applies. Returns how many were released.
func (s *Service) ReleaseExpiredLeases(ctx context.Context, batch int) (int, error) {
	now := s.now()
	expired, err := s.findTasks(ctx, "expired leases", bson.M{"lease_expires_at": bson.M{"$lte": now}},
		options.Find().SetSort(bson.D{{Key: "lease_expires_at", Value: 1}}).SetLimit(int64(batch)))
	if err != nil {
		return 0, err
	}
	ups := make([]taskUpdate, len(expired))
	for i, t := range expired {
		ups[i] = taskUpdate{task: t, update: bson.M{"$set": closeLeaseSet(t, now, ReleasedByTimeout, ReleaseTimeout, false, false)}}
	}
	won, err := s.bulkGuarded(ctx, "release expired leases", ups)
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
func (s *Service) ExpireTasks(ctx context.Context, batch int) (int, error) {
	now := s.now()
	f := bson.M{"expires_at": bson.M{"$lte": now}, "source": SourceServer, "deleted_at": nil, "archived_at": nil, "lease_id": nil}
	cur, err := s.tasks.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "expires_at", Value: 1}}).SetLimit(int64(batch)))
	if err != nil {
		return 0, wrap("find expired tasks", err)
	}
	var tasks []*Task
	if err := cur.All(ctx, &tasks); err != nil {
		return 0, wrap("decode expired tasks", err)
	}
	set := bson.M{"archived_at": now}
	if s.set.TaskExpiryAction == "delete" {
		set = bson.M{"deleted_at": now, "deleted_reason": "expired"}
	}
	won, err := s.bulkSame(ctx, "expire tasks", tasks, bson.M{"$set": set})
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
func (s *Service) CountOverdueLeases(ctx context.Context) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, bson.M{"lease_expires_at": bson.M{"$lte": s.now()}})
	if err != nil {
		return 0, wrap("count overdue leases", err)
	}
	s.metrics.OverdueLeases.Set(float64(n))
	return int(n), nil
}
