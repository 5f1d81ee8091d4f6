package taskecho

import (
	"context"
	"time"
)

// Intake is the push side of the task server: a client's submit of a queue and its appends of
// messages, log lines and status changes to one task.
type Intake struct{ *core }

// IncrementalResult carries what the three responses report.
type IncrementalResult struct {
	Index          int
	At             time.Time
	PreviousStatus string
}

func (s *Intake) incrementalTask(ctx context.Context, in *IncrementalInput) (*Task, error) {
	_, t, err := s.incrementalTarget(ctx, in)
	return t, err
}

// incrementalTarget checks the project and queue of an incremental update and loads the task.
func (c *core) incrementalTarget(ctx context.Context, in *IncrementalInput) (*Project, *Task, error) {
	details := map[string]any{"project_id": in.ProjectID, "queue_id": in.QueueID, "task_id": in.TaskID}
	p, err := c.project(ctx, in.ProjectID)
	if err != nil {
		if IsKind(err, KindNotFound) {
			return nil, nil, notFound("项目不存在", details)
		}
		return nil, nil, err
	}
	if _, err := c.queue(ctx, in.ProjectID, in.QueueID, details); err != nil {
		return nil, nil, err
	}
	// Soft-deleted tasks are found, as in TaskEcho: a client may still be streaming into them.
	t, err := c.findTask(ctx, TaskRef{ProjectID: in.ProjectID, QueueID: &in.QueueID, TaskID: in.TaskID}, true)
	return p, t, err
}

// AppendMessage appends one conversation message (POST /tasks/message). It is one atomic update
// (see appendEntry): concurrent appends to one task never conflict and are stored in arrival order.
// The task's first message of each second also touches the project and queue (last_task_at); the
// others of that second cost the one update alone (docs/taskecho.md).
func (s *Intake) AppendMessage(ctx context.Context, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	msg := Message{Role: in.Role, Content: in.Content, SessionID: in.SessionID, CreatedAt: now}
	idx, first, err := s.appendEntry(ctx, in, "messages", "message_seq", msg, now)
	if err != nil {
		return nil, err
	}
	if first {
		s.touch(ctx, in.ProjectID, &in.QueueID, now)
	}
	return &IncrementalResult{At: now, Index: idx}, nil
}

// AppendLog appends one log line (POST /tasks/log). Like TaskEcho it does not move last_task_at,
// only the queue's updated_at, which the task's first log line of each second moves.
func (s *Intake) AppendLog(ctx context.Context, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	idx, first, err := s.appendEntry(ctx, in, "logs", "log_seq", LogEntry{Content: in.Content, CreatedAt: now}, now)
	if err != nil {
		return nil, err
	}
	if !first {
		return &IncrementalResult{At: now, Index: idx}, nil
	}
	if err := s.store.UpdateQueue(ctx, in.ProjectID, in.QueueID, Fields{"updated_at": now}); err != nil {
		s.log.WarnContext(ctx, "echo touch queue failed", "queue_id", in.QueueID, "err", err)
	}
	return &IncrementalResult{At: now, Index: idx}, nil
}

// appendEntry $pushes entry onto the task's array field and $incs its counter seqField in the same
// single-document update, so the counter's new value is the entry's position: a gap-free,
// server-assigned id, whatever the number of concurrent appends. Nothing is read first, so an
// append never conflicts with another write. Soft-deleted tasks are found, as in TaskEcho: a client
// may still be streaming into them. When no task matches, the caller gets the 404 that says which
// of project, queue or task is missing. first says this is the task's first append of field in
// at's second: the one that touches the project and queue, so that a burst of appends pays for the
// touches once a second (they are a UI ordering hint, at most a second behind).
func (s *Intake) appendEntry(ctx context.Context, in *IncrementalInput, field, seqField string, entry any, at time.Time) (idx int, first bool, err error) {
	key := TaskKey(in.ProjectID, &in.QueueID, in.TaskID)
	for range maxWriteAttempts {
		n, first, found, err := s.store.Append(ctx, key, field, seqField, entry, at)
		if err != nil {
			return 0, false, wrap("append to "+field+" of task "+in.TaskID, err)
		}
		if found {
			return int(n) - 1, first, nil
		}
		if err := s.startCounter(ctx, in, field, seqField); err != nil {
			return 0, false, err
		}
	}
	return 0, false, conflict("任务正在被并发修改，请重试", map[string]any{"task_id": in.TaskID})
}

// startCounter gives a task written before the append counters existed its counter (the length of
// its array), guarded on that length, or answers the 404 when there is no such task.
func (s *Intake) startCounter(ctx context.Context, in *IncrementalInput, field, seqField string) error {
	t, err := s.incrementalTask(ctx, in)
	if err != nil {
		return err
	}
	n := len(t.Messages)
	if field == "logs" {
		n = len(t.Logs)
	}
	err = s.store.StartCounter(ctx, t.ID, field, seqField, n)
	return wrap("start "+seqField+" of task "+in.TaskID, err)
}

// SetStatus changes a task's status (PATCH /tasks/status) without touching updated_at or the
// pull fields, as TaskEcho does. pending → done/error is recorded as an execution.
func (s *Intake) SetStatus(ctx context.Context, actor Actor, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	res := &IncrementalResult{At: now}
	var project *Project
	var before *Task
	_, err := s.writeTask(ctx, "set-status", func(ctx context.Context) (*Task, error) {
		p, t, err := s.incrementalTarget(ctx, in)
		project = p
		return t, err
	}, func(t *Task) (Fields, error) {
		before, res.PreviousStatus = t, t.Status
		set := Fields{"status": in.Status}
		if in.Status == StatusPending && t.Status != StatusPending {
			set["pending_since"] = now
		}
		return set, nil
	})
	if err != nil {
		return nil, err
	}
	if isExecution(before.Status, in.Status) {
		s.recordExecution(ctx, before, in.Status, project.Name, hostnameOf(project.ClientInfo), actor.Name, now)
	}
	s.touch(ctx, in.ProjectID, &in.QueueID, now)
	return res, nil
}
