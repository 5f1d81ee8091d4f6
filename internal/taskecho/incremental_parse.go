package taskecho

import (
	"encoding/json"
	"strings"
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
