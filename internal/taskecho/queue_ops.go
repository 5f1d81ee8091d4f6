package taskecho

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// clearsPull says whether op releases leases and clears pulled_at (reset_clear_pull_status /
// rerun_clear_pull_status; reset-error follows the reset setting).
func (s *Service) clearsPull(op string) bool {
	if op == queueop.ReRun || op == OpTaskReRun {
		return s.set.RerunClearPullStatus
	}
	return s.set.ResetClearPullStatus
}

func queueOpFilter(op queueop.Op) bson.M {
	f := bson.M{"project_id": op.ProjectID, "queue_id": op.QueueID, "deleted_at": nil}
	if op.Operation == queueop.ResetError {
		f["status"] = StatusError
	}
	return f
}

// CountQueueOp counts the tasks op will touch, for the HTTP answer.
func (s *Service) CountQueueOp(ctx context.Context, op queueop.Op) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, queueOpFilter(op))
	if err != nil {
		return 0, wrap("count tasks for "+op.Operation, err)
	}
	return int(n), nil
}

// ApplyQueueOpBatch resets the next batch of tasks after afterID (in _id order) and returns how
// many it changed and the last _id seen ("" when the queue is exhausted).
func (s *Service) ApplyQueueOpBatch(ctx context.Context, op queueop.Op, afterID string, batch int) (int, string, error) {
	var after bson.ObjectID // the zero id sorts before every real one
	if afterID != "" {
		var err error
		if after, err = bson.ObjectIDFromHex(afterID); err != nil {
			return 0, "", fmt.Errorf("queue op cursor %q: %w", afterID, err)
		}
	}
	f := queueOpFilter(op)
	f["_id"] = bson.M{"$gt": after}
	tasks, err := s.findTasks(ctx, "tasks for "+op.Operation, f, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(batch)))
	if err != nil {
		return 0, "", err
	}
	if len(tasks) == 0 {
		return 0, "", nil
	}
	if err := s.resetTasks(ctx, op, tasks); err != nil {
		return 0, "", err
	}
	last := tasks[len(tasks)-1].ID
	changed, err := s.countApplied(ctx, op, after, last)
	if err != nil {
		return 0, "", err
	}
	return changed, last.Hex(), nil
}

// countApplied counts the tasks in the cursor range (after, last] that op has reset, read back
// from their pending_since stamp rather than summed from this call's writes. A batch whose worker
// died after writing is retried from the same cursor; for reset-error the retry no longer sees
// the tasks it already reset and reaches further, so only a read-back over the whole range
// counts each task of the operation exactly once.
func (s *Service) countApplied(ctx context.Context, op queueop.Op, after, last bson.ObjectID) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, bson.M{"project_id": op.ProjectID, "queue_id": op.QueueID, "deleted_at": nil,
		"pending_since": op.At, "_id": bson.M{"$gt": after, "$lte": last}})
	if err != nil {
		return 0, wrap("count tasks reset by "+op.Operation, err)
	}
	return int(n), nil
}

// resetTasks applies op to tasks with guarded writes, re-reading and retrying the ones a
// concurrent writer changed.
func (s *Service) resetTasks(ctx context.Context, op queueop.Op, tasks []*Task) error {
	for attempt := 0; len(tasks) > 0; attempt++ {
		if attempt == maxWriteAttempts {
			return fmt.Errorf("%s: %d tasks kept changing concurrently", op.Operation, len(tasks))
		}
		won, err := s.bulkGuarded(ctx, op.Operation+" tasks", s.resetUpdates(op, tasks))
		if err != nil {
			return err
		}
		if tasks, err = s.reloadLost(ctx, tasks, won, op); err != nil {
			return err
		}
	}
	return nil
}

// resetUpdates is op's write for each task; a lease it clears is closed in the same write.
func (s *Service) resetUpdates(op queueop.Op, tasks []*Task) []taskUpdate {
	clear := s.clearsPull(op.Operation)
	ups := make([]taskUpdate, len(tasks))
	for i, t := range tasks {
		set := bson.M{"status": StatusPending, "pending_since": op.At}
		if clear {
			for k, v := range closeLeaseSet(t, op.At, op.Actor, ReleaseQueueOp, false, false) {
				set[k] = v
			}
		}
		ups[i] = taskUpdate{task: t, update: bson.M{"$set": set}}
	}
	return ups
}

// reloadLost re-reads the tasks whose guarded write lost and keeps those op still applies to
// (not yet reset by this operation).
func (s *Service) reloadLost(ctx context.Context, tasks, won []*Task, op queueop.Op) ([]*Task, error) {
	gotIt := make(map[bson.ObjectID]bool, len(won))
	for _, t := range won {
		gotIt[t.ID] = true
		if s.clearsPull(op.Operation) {
			s.observeClose(t, op.At, ReleaseQueueOp, false)
		}
	}
	var ids bson.A
	for _, t := range tasks {
		if !gotIt[t.ID] {
			ids = append(ids, t.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	f := queueOpFilter(op)
	f["_id"] = bson.M{"$in": ids}
	f["pending_since"] = bson.M{"$ne": op.At}
	return s.findTasks(ctx, "contended tasks", f)
}

// FinishQueueOp stamps the queue (last_reset_at, last_operation) and records the operation in
// the audit log and the metrics. Re-running it rewrites the same values.
func (s *Service) FinishQueueOp(ctx context.Context, op queueop.Op, count int) error {
	set := bson.M{"last_reset_at": op.At, "last_operation": op.Operation, "last_task_at": op.At, "updated_at": s.now()}
	if _, err := s.queues.UpdateOne(ctx, bson.M{"project_id": op.ProjectID, "queue_id": op.QueueID}, bson.M{"$set": set}); err != nil {
		return wrap("stamp queue "+op.QueueID, err)
	}
	s.metrics.QueueOperations.WithLabelValues(op.Operation).Inc()
	q := op.QueueID
	s.recordAudit(ctx, AuditEntry{At: op.At, Actor: op.Actor, Action: "queue-" + op.Operation, ProjectID: op.ProjectID,
		QueueID: &q, Count: count, Details: map[string]any{"op_id": op.OpID, "cleared_pull": s.clearsPull(op.Operation)}})
	return nil
}

// RunQueueOp applies a whole queue operation in-process (batches, then the stamp). The Temporal
// workflow does the same steps as separate activities.
func (s *Service) RunQueueOp(ctx context.Context, op queueop.Op) (int, error) {
	total, after := 0, ""
	for {
		n, next, err := s.ApplyQueueOpBatch(ctx, op, after, queueop.BatchSize)
		total += n
		if err != nil {
			return total, err
		}
		if next == "" {
			break
		}
		after = next
	}
	return total, s.FinishQueueOp(ctx, op, total)
}

// ReRunTask re-runs one task (T4): status pending and, per rerun_clear_pull_status, its lease
// ends (reason queue-op) and it becomes pullable again.
func (s *Service) ReRunTask(ctx context.Context, actor Actor, ref TaskRef) (*Task, time.Time, error) {
	now := s.now()
	clear := s.clearsPull(OpTaskReRun)
	var closed *Task
	t, err := s.writeTask(ctx, "task-re-run", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (bson.M, error) {
			set := bson.M{"status": StatusPending, "pending_since": now}
			if clear {
				if t.LeaseID != nil {
					closed = t
				}
				for k, v := range closeLeaseSet(t, now, actor.Name, ReleaseQueueOp, false, false) {
					set[k] = v
				}
			}
			return bson.M{"$set": set}, nil
		})
	if err != nil {
		return nil, now, err
	}
	if closed != nil {
		s.observeClose(closed, now, ReleaseQueueOp, false)
	}
	s.metrics.QueueOperations.WithLabelValues(OpTaskReRun).Inc()
	s.touch(ctx, ref.ProjectID, t.QueueID, now)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-re-run", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1})
	return t, now, nil
}
