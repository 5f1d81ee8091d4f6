package taskecho

import (
	"context"
	"errors"
	"maps"
	"time"
)

// CreateTask creates a server task at project level (queueID nil) or in a queue (POST …/queues/{queueId}/tasks, POST …/projects/{projectId}/tasks).
func (s *Admin) CreateTask(ctx context.Context, actor Actor, projectID string, queueID *string, f *TaskFields) (*Task, error) {
	now := s.now()
	t := &Task{
		Key: TaskKey(projectID, queueID, f.TaskID), ProjectID: projectID, QueueID: queueID, TaskID: f.TaskID,
		Name: *f.Name, Prompt: *f.Prompt, SpecFile: orEmpty(f.SpecFile), Status: StatusPending, Report: f.Report,
		Tags: orEmpty(f.Tags), Source: SourceServer, CreatedAt: now, UpdatedAt: now, ServerModifiedAt: &now,
		Priority: f.Priority, PriorityRank: f.PriorityRank, ExpiresAt: f.ExpiresAt,
		PullHistory: []PullEntry{}, Messages: []Message{}, Logs: []LogEntry{},
	}
	if f.Status != nil {
		t.Status = *f.Status
	}
	if t.Status == StatusPending {
		t.PendingSince = &now
	}
	if t.ExpiresAt == nil && s.set.TaskExpiry > 0 {
		exp := now.Add(s.set.TaskExpiry)
		t.ExpiresAt = &exp
	}
	id, err := s.store.InsertTask(ctx, t)
	if err != nil {
		if errors.Is(err, ErrDuplicateKey) {
			return nil, &Error{Kind: KindDuplicate, Message: "任务已存在", Details: map[string]any{"task_id": f.TaskID}}
		}
		return nil, wrap("create task "+f.TaskID, err)
	}
	t.ID = id
	s.touch(ctx, projectID, queueID, now)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-create", ProjectID: projectID, QueueID: queueID,
		TaskIDs: []string{t.TaskID}, Count: 1})
	return t, nil
}

// EditTask applies a server edit (PUT …/tasks/{taskId}). Editing a pulled task ends its lease (reason
// server) and makes it pullable again; every edit bumps server_modified_at, which the pull's
// since/modified filters and the push conflict rule read.
func (s *Admin) EditTask(ctx context.Context, actor Actor, ref TaskRef, f *TaskFields) (*Task, error) {
	now := s.now()
	pulled := func(t *Task) bool { return t.PulledAt != nil || t.LeaseID != nil }
	t, cleared, err := s.writeEndingLease(ctx, actor, ref, "task-edit", now, editSet(f, now), pulled, false)
	if err != nil {
		return nil, err
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-edit", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"cleared_pull": cleared}})
	return t, nil
}

// writeEndingLease writes set to the task of a server edit or delete (action) and, when leased
// says the task is pulled, ends its lease (reason server) in the same write; keepPullMarks is
// closeLeaseSet's. It reports whether a lease ended, and touches the task's queue.
func (s *Admin) writeEndingLease(ctx context.Context, actor Actor, ref TaskRef, action string, now time.Time,
	set Fields, leased func(*Task) bool, keepPullMarks bool) (*Task, bool, error) {
	var closed *Task
	t, err := s.writeTask(ctx, action, func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (Fields, error) {
			set := maps.Clone(set) // a retried write starts again from the caller's fields
			if leased(t) {
				closed = t
				maps.Copy(set, closeLeaseSet(t, now, actor.Name, ReleaseServer, false, keepPullMarks))
			}
			return set, nil
		})
	if err != nil {
		return nil, false, err
	}
	if closed != nil {
		s.observeClose(closed, now, ReleaseServer, false)
	}
	s.touch(ctx, ref.ProjectID, t.QueueID, now)
	return t, closed != nil, nil
}

func editSet(f *TaskFields, now time.Time) Fields {
	set := Fields{"updated_at": now, "server_modified_at": now}
	if f.Name != nil {
		set["name"] = *f.Name
	}
	if f.Prompt != nil {
		set["prompt"] = *f.Prompt
	}
	if f.Status != nil {
		set["status"] = *f.Status
		if *f.Status == StatusPending {
			set["pending_since"] = now
		}
	}
	if f.SpecFileSet {
		set["spec_file"] = orEmpty(f.SpecFile)
	}
	if f.TagsSet {
		set["tags"] = orEmpty(f.Tags)
	}
	if f.ReportSet {
		set["report"] = f.Report
	}
	if f.PrioritySet {
		set["priority"], set["priority_rank"] = f.Priority, f.PriorityRank
	}
	if f.ExpiresSet {
		set["expires_at"] = f.ExpiresAt
		if f.ExpiresAt == nil || f.ExpiresAt.After(now) {
			set["archived_at"] = nil // a new expiry brings an archived task back
		}
	}
	return set
}

// DeleteTask soft-deletes a task (DELETE …/tasks/{taskId}): deleted_at is set, the document and its pull
// history stay, a later push of it answers 410 and pulls never return it. An open lease ends with
// reason server.
func (s *Admin) DeleteTask(ctx context.Context, actor Actor, ref TaskRef) (*Task, error) {
	now := s.now()
	set := Fields{"deleted_at": now, "deleted_reason": DeletedByServer, "updated_at": now}
	leased := func(t *Task) bool { return t.LeaseID != nil }
	t, _, err := s.writeEndingLease(ctx, actor, ref, "task-delete", now, set, leased, true)
	if err != nil {
		return nil, err
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-delete", ProjectID: ref.ProjectID, QueueID: t.QueueID,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"was_pulled": t.PulledAt != nil}})
	return t, nil
}

// MoveResult describes a move (POST /api/v1/projects/{projectId}/tasks/{taskId}/move).
type MoveResult struct {
	Task    *Task
	From    string
	To      string
	MovedAt time.Time
}

// MoveTask moves a task to another queue (to nil = project level). The document itself moves, so
// the pull state and history are kept and nothing can be lost: a clash with a task already in the
// target is a 409 before anything changes.
func (s *Admin) MoveTask(ctx context.Context, actor Actor, ref TaskRef, to *string) (*MoveResult, error) {
	now := s.now()
	if to != nil {
		if _, err := s.queue(ctx, ref.ProjectID, *to, map[string]any{"queue_id": *to}); err != nil {
			if IsKind(err, KindNotFound) {
				return nil, notFound("目标队列不存在", map[string]any{"queue_id": *to})
			}
			return nil, err
		}
	}
	var from string
	t, err := s.writeTask(ctx, "task-move", func(ctx context.Context) (*Task, error) { return s.findTask(ctx, ref, false) },
		func(t *Task) (Fields, error) {
			if sameQueue(t.QueueID, to) {
				return nil, invalid("queue_id", "任务已在目标队列中")
			}
			from = queueLabel(t.QueueID)
			return Fields{"queue_id": to, "key": TaskKey(t.ProjectID, to, t.TaskID), "updated_at": now}, nil
		})
	if err != nil {
		if IsKind(err, KindDuplicate) {
			return nil, &Error{Kind: KindDuplicate, Message: "目标队列中已存在相同ID的任务", Details: map[string]any{"task_id": ref.TaskID}}
		}
		return nil, err
	}
	s.touch(ctx, ref.ProjectID, to, now)
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "task-move", ProjectID: ref.ProjectID, QueueID: to,
		TaskIDs: []string{t.TaskID}, Count: 1, Details: map[string]any{"from": from, "to": queueLabel(to)}})
	return &MoveResult{Task: t, From: from, To: queueLabel(to), MovedAt: now}, nil
}

func sameQueue(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func orEmpty[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
