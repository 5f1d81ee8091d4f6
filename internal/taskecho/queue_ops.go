package taskecho

import (
	"context"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// QueueOps are the queue-wide operations (reset, reset-error, re-run: package queueop describes
// them, the Temporal workflow runs them batch by batch) and the re-run of one task.
type QueueOps struct{ *core }

// clearsPull says whether op releases leases and clears pulled_at (reset_clear_pull_status /
// rerun_clear_pull_status; reset-error follows the reset setting).
func (c *core) clearsPull(op string) bool {
	if op == queueop.ReRun || op == OpTaskReRun {
		return c.set.RerunClearPullStatus
	}
	return c.set.ResetClearPullStatus
}

// CountQueueOp counts the tasks op will touch, for the HTTP answer.
func (s *QueueOps) CountQueueOp(ctx context.Context, op queueop.Op) (int, error) {
	n, err := s.store.CountQueueOp(ctx, op)
	if err != nil {
		return 0, wrap("count tasks for "+op.Operation, err)
	}
	return n, nil
}

// ApplyQueueOpBatch resets the next batch of tasks after afterID (in _id order) and returns how
// many it changed and the last _id seen ("" when the queue is exhausted).
func (s *QueueOps) ApplyQueueOpBatch(ctx context.Context, op queueop.Op, afterID string, batch int) (int, string, error) {
	var after ID // the zero id sorts before every real one
	if afterID != "" {
		var err error
		if after, err = ParseID(afterID); err != nil {
			return 0, "", fmt.Errorf("queue op cursor %q: %w", afterID, err)
		}
	}
	tasks, err := s.store.QueueOpTasks(ctx, op, after, batch)
	if err != nil {
		return 0, "", wrap("find tasks for "+op.Operation, err)
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
func (s *QueueOps) countApplied(ctx context.Context, op queueop.Op, after, last ID) (int, error) {
	n, err := s.store.CountQueueOpApplied(ctx, op, after, last)
	if err != nil {
		return 0, wrap("count tasks reset by "+op.Operation, err)
	}
	return n, nil
}

// resetTasks applies op to tasks with guarded writes, re-reading and retrying the ones a
// concurrent writer changed.
func (s *QueueOps) resetTasks(ctx context.Context, op queueop.Op, tasks []*Task) error {
	for attempt := 0; len(tasks) > 0; attempt++ {
		if attempt == maxWriteAttempts {
			return fmt.Errorf("%s: %d tasks kept changing concurrently", op.Operation, len(tasks))
		}
		won, err := s.store.WriteTasks(ctx, op.Operation+" tasks", s.resetUpdates(op, tasks))
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
func (s *QueueOps) resetUpdates(op queueop.Op, tasks []*Task) []TaskWrite {
	clear := s.clearsPull(op.Operation)
	ups := make([]TaskWrite, len(tasks))
	for i, t := range tasks {
		set := Fields{"status": StatusPending, "pending_since": op.At}
		if clear {
			for k, v := range closeLeaseSet(t, op.At, op.Actor, ReleaseQueueOp, false, false) {
				set[k] = v
			}
		}
		ups[i] = TaskWrite{Task: t, Set: set}
	}
	return ups
}

// reloadLost re-reads the tasks whose guarded write lost and keeps those op still applies to
// (not yet reset by this operation).
func (s *QueueOps) reloadLost(ctx context.Context, tasks, won []*Task, op queueop.Op) ([]*Task, error) {
	gotIt := make(map[ID]bool, len(won))
	for _, t := range won {
		gotIt[t.ID] = true
		if s.clearsPull(op.Operation) {
			s.observeClose(t, op.At, ReleaseQueueOp, false)
		}
	}
	var ids []ID
	for _, t := range tasks {
		if !gotIt[t.ID] {
			ids = append(ids, t.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	pending, err := s.store.QueueOpPending(ctx, op, ids)
	return pending, wrap("find contended tasks", err)
}

// FinishQueueOp stamps the queue (last_reset_at, last_operation) and records the operation in
// the audit log and the metrics. Re-running it rewrites the same values.
func (s *QueueOps) FinishQueueOp(ctx context.Context, op queueop.Op, count int) error {
	set := Fields{"last_reset_at": op.At, "last_operation": op.Operation, "last_task_at": op.At, "updated_at": s.now()}
	if err := s.store.UpdateQueue(ctx, op.ProjectID, op.QueueID, set); err != nil {
		return wrap("stamp queue "+op.QueueID, err)
	}
	s.metrics.QueueOperation(op.Operation)
	q := op.QueueID
	s.recordAudit(ctx, AuditEntry{At: op.At, Actor: op.Actor, Action: "queue-" + op.Operation, ProjectID: op.ProjectID,
		QueueID: &q, Count: count, Details: map[string]any{"op_id": op.OpID, "cleared_pull": s.clearsPull(op.Operation)}})
	return nil
}

// RunQueueOp applies a whole queue operation in-process (batches, then the stamp). The Temporal
// workflow does the same steps as separate activities.
func (s *QueueOps) RunQueueOp(ctx context.Context, op queueop.Op) (int, error) {
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

// ReRunTask re-runs one task (POST /api/v1/projects/{projectId}/queues/{queueId}/tasks/{taskId}/re-run):
// status pending and, per rerun_clear_pull_status, its lease ends (reason queue-op) and it
// becomes pullable again.
func (s *QueueOps) ReRunTask(ctx context.Context, actor Actor, ref TaskRef) (*Task, time.Time, error) {
	now := s.now()
	clear := s.clearsPull(OpTaskReRun)
	var closed *Task
	t, err := s.writeTask(ctx, "task-re-run", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (Fields, error) {
			set := Fields{"status": StatusPending, "pending_since": now}
			if clear {
				if t.LeaseID != nil {
					closed = t
				}
				for k, v := range closeLeaseSet(t, now, actor.Name, ReleaseQueueOp, false, false) {
					set[k] = v
				}
			}
			return set, nil
		})
	if err != nil {
		return nil, now, err
	}
	if closed != nil {
		s.observeClose(closed, now, ReleaseQueueOp, false)
	}
	s.metrics.QueueOperation(OpTaskReRun)
	s.touch(ctx, ref.ProjectID, t.QueueID, now)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-re-run", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1})
	return t, now, nil
}
