package taskecho

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// IncrementalInput is a validated body of POST /tasks/message, POST /tasks/log or
// PATCH /tasks/status (ids trimmed).
type IncrementalInput struct {
	ProjectID string
	QueueID   string
	TaskID    string
	Role      string  // message: USER | ASSISTANT
	Content   string  // message, log: trimmed
	SessionID *string // message
	Status    string  // status: lowercase
}

// Incremental kinds.
const (
	IncMessage = "message"
	IncLog     = "log"
	IncStatus  = "status"
)

// ParseIncremental validates one of the three incremental-update bodies with TaskEcho's rules.
func ParseIncremental(kind string, body []byte) (*IncrementalInput, error) {
	m, err := decodeTop(body)
	if err != nil {
		return nil, err
	}
	c := &collector{}
	in := &IncrementalInput{
		ProjectID: strings.TrimSpace(c.str("project_id", m["project_id"], 255)),
		QueueID:   strings.TrimSpace(c.str("queue_id", m["queue_id"], 255)),
		TaskID:    strings.TrimSpace(c.str("task_id", m["task_id"], 255)),
	}
	switch kind {
	case IncMessage:
		in.Role = parseRole(c, "role", m["role"])
		in.Content = strings.TrimSpace(c.str("content", m["content"], 100000))
		if raw, ok := m["session_id"]; ok && !isNull(raw) {
			var sid string
			if json.Unmarshal(raw, &sid) == nil {
				in.SessionID = &sid
			}
		}
	case IncLog:
		in.Content = strings.TrimSpace(c.str("content", m["content"], 100000))
	case IncStatus:
		in.Status = parseClientStatus(c, "status", m["status"])
	}
	if len(c.errs) > 0 {
		return nil, &ValidationError{Message: "请求参数验证失败", Errors: c.errs}
	}
	return in, nil
}

// IncrementalResult carries what the three responses report.
type IncrementalResult struct {
	Index          int
	At             time.Time
	PreviousStatus string
}

func (s *Service) incrementalTask(ctx context.Context, in *IncrementalInput) (*Task, error) {
	_, t, err := s.incrementalTarget(ctx, in)
	return t, err
}

// incrementalTarget checks the project and queue of an incremental update and loads the task.
func (s *Service) incrementalTarget(ctx context.Context, in *IncrementalInput) (*Project, *Task, error) {
	details := map[string]any{"project_id": in.ProjectID, "queue_id": in.QueueID, "task_id": in.TaskID}
	p, err := s.Project(ctx, in.ProjectID)
	if err != nil {
		if IsKind(err, KindNotFound) {
			return nil, nil, notFound("项目不存在", details)
		}
		return nil, nil, err
	}
	if _, err := s.Queue(ctx, in.ProjectID, in.QueueID, details); err != nil {
		return nil, nil, err
	}
	// Soft-deleted tasks are found, as in TaskEcho: a client may still be streaming into them.
	t, err := s.findTask(ctx, TaskRef{ProjectID: in.ProjectID, QueueID: &in.QueueID, TaskID: in.TaskID}, true)
	return p, t, err
}

// AppendMessage appends one conversation message (POST /tasks/message). It is one atomic update
// (see appendEntry): concurrent appends to one task never conflict and are stored in arrival order.
func (s *Service) AppendMessage(ctx context.Context, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	msg := Message{Role: in.Role, Content: in.Content, SessionID: in.SessionID, CreatedAt: now}
	idx, err := s.appendEntry(ctx, in, "messages", "message_seq", msg)
	if err != nil {
		return nil, err
	}
	s.touch(ctx, in.ProjectID, &in.QueueID, now)
	return &IncrementalResult{At: now, Index: idx}, nil
}

// AppendLog appends one log line (POST /tasks/log). Like TaskEcho it does not move last_task_at,
// only the queue's updated_at.
func (s *Service) AppendLog(ctx context.Context, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	idx, err := s.appendEntry(ctx, in, "logs", "log_seq", LogEntry{Content: in.Content, CreatedAt: now})
	if err != nil {
		return nil, err
	}
	if _, err := s.queues.UpdateOne(ctx, bson.M{"project_id": in.ProjectID, "queue_id": in.QueueID},
		bson.M{"$set": bson.M{"updated_at": now}}); err != nil {
		s.log.WarnContext(ctx, "echo touch queue failed", "queue_id", in.QueueID, "err", err)
	}
	return &IncrementalResult{At: now, Index: idx}, nil
}

// appendEntry $pushes entry onto the task's array field and $incs its counter seqField in the same
// single-document update, so the counter's new value is the entry's position: a gap-free,
// server-assigned id, whatever the number of concurrent appends. Nothing is read first, so an
// append never conflicts with another write. Soft-deleted tasks are found, as in TaskEcho: a client
// may still be streaming into them. When no task matches, the caller gets the 404 that says which
// of project, queue or task is missing.
func (s *Service) appendEntry(ctx context.Context, in *IncrementalInput, field, seqField string, entry any) (int, error) {
	key := TaskKey(in.ProjectID, &in.QueueID, in.TaskID)
	// The whole post-image comes back: a projection ({seqField: 1}) would carry less, but the
	// embedded database does not implement findAndModify's "fields" yet.
	opts := options.FindOneAndUpdate().SetReturnDocument(options.After)
	for range maxWriteAttempts {
		var out bson.M
		err := s.tasks.FindOneAndUpdate(ctx, bson.M{"key": key, seqField: bson.M{"$exists": true}},
			bson.M{"$push": bson.M{field: entry}, "$inc": bson.M{seqField: 1}}, opts).Decode(&out)
		if err == nil {
			n, _ := asInt64(out[seqField])
			return int(n) - 1, nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return 0, wrap("append to "+field+" of task "+in.TaskID, err)
		}
		if err := s.startCounter(ctx, in, field, seqField); err != nil {
			return 0, err
		}
	}
	return 0, conflict("任务正在被并发修改，请重试", map[string]any{"task_id": in.TaskID})
}

// startCounter gives a task written before the append counters existed its counter (the length of
// its array), guarded on that length, or answers the 404 when there is no such task.
func (s *Service) startCounter(ctx context.Context, in *IncrementalInput, field, seqField string) error {
	t, err := s.incrementalTask(ctx, in)
	if err != nil {
		return err
	}
	n := len(t.Messages)
	if field == "logs" {
		n = len(t.Logs)
	}
	_, err = s.tasks.UpdateOne(ctx, bson.M{"_id": t.ID, seqField: bson.M{"$exists": false}, field: bson.M{"$size": n}},
		bson.M{"$set": bson.M{seqField: n}})
	return wrap("start "+seqField+" of task "+in.TaskID, err)
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// SetStatus changes a task's status (PATCH /tasks/status) without touching updated_at or the
// pull fields, as TaskEcho does. pending → done/error is recorded as an execution.
func (s *Service) SetStatus(ctx context.Context, actor Actor, in *IncrementalInput) (*IncrementalResult, error) {
	now := s.now()
	res := &IncrementalResult{At: now}
	var project *Project
	var before *Task
	_, err := s.writeTask(ctx, "set-status", func(ctx context.Context) (*Task, error) {
		p, t, err := s.incrementalTarget(ctx, in)
		project = p
		return t, err
	}, func(t *Task) (bson.M, error) {
		before, res.PreviousStatus = t, t.Status
		set := bson.M{"status": in.Status}
		if in.Status == StatusPending && t.Status != StatusPending {
			set["pending_since"] = now
		}
		return bson.M{"$set": set}, nil
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
