package taskecho

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SubmitInput is a validated POST /api/v1/submit body.
type SubmitInput struct {
	ProjectID   string
	ProjectName string
	QueueID     string
	QueueName   string
	ClientInfo  *ClientInfo // nil when absent
	GitInfo     *GitInfo    // nil when absent; blank values already turned into nil
	Meta        any
	Tasks       []SubmitTask
}

// SubmitTask is one validated task of a submit payload.
type SubmitTask struct {
	ID           string
	Name         string
	Prompt       string
	Status       string
	SpecFile     []string
	Report       *string
	Messages     []Message
	Logs         []LogEntry
	Tags         []string // nil when the payload did not send tags
	Priority     any
	PriorityRank int
	PrioritySet  bool
	ExpiresAt    *time.Time
}

// ErrInvalidJSON wraps a body that is not a JSON object.
type ErrInvalidJSON struct{ Err error }

func (e *ErrInvalidJSON) Error() string { return "请求体解析失败: " + e.Err.Error() }

// SubmitBody is a submit payload decoded once. The project a key's binding is checked against
// and the project the push writes to are both read from this one decoding, so no spelling of
// the body can name one project to the check and another to the write.
type SubmitBody struct {
	// ProjectID is the body's project_id when it is a string ("" otherwise; Parse reports why).
	ProjectID string
	top       map[string]json.RawMessage
}

// DecodeSubmit decodes a submit body far enough to know its project, because TaskEcho checks a
// project-bound key's scope before validating the rest. It returns *ErrInvalidJSON for a body
// that is not a JSON object. The check and Parse read project_id from the same decoded map, so
// they agree whatever other spellings the body holds; over HTTP a repeated key, in any case, is
// already refused by the body reader (httpx.ReadBody → CheckJSON).
func DecodeSubmit(body []byte) (*SubmitBody, error) {
	top, err := decodeTop(body)
	if err != nil {
		return nil, err
	}
	b := &SubmitBody{top: top}
	_ = json.Unmarshal(top["project_id"], &b.ProjectID) // a non-string is reported by Parse
	return b, nil
}

// ParseSubmit decodes and validates a submit body with TaskEcho's rules (DecodeSubmit, then
// Parse).
func ParseSubmit(body []byte, now time.Time) (*SubmitInput, error) {
	b, err := DecodeSubmit(body)
	if err != nil {
		return nil, err
	}
	return b.Parse(now)
}

// Parse validates the decoded body with TaskEcho's rules, collecting every field error, and
// returns *ValidationError for field errors. now stamps messages and logs sent without
// createdAt.
func (b *SubmitBody) Parse(now time.Time) (*SubmitInput, error) {
	top := b.top
	c := &collector{}
	in := &SubmitInput{
		ProjectID:   c.str("project_id", top["project_id"], 255),
		ProjectName: c.str("project_name", top["project_name"], 1000),
		QueueID:     c.str("queue_id", top["queue_id"], 255),
		QueueName:   c.str("queue_name", top["queue_name"], 1000),
	}
	if raw, ok := top["clientInfo"]; ok {
		in.ClientInfo = parseClientInfo(c, raw)
	}
	if raw, ok := top["gitInfo"]; ok {
		in.GitInfo = parseGitInfo(c, raw)
	}
	if raw, ok := top["meta"]; ok && !isFalsyJSON(raw) {
		var m any
		if json.Unmarshal(raw, &m) == nil {
			in.Meta = m
		}
	}
	in.Tasks = parseSubmitTasks(c, top["tasks"], now)
	if len(c.errs) > 0 {
		return nil, &ValidationError{Message: "请求参数验证失败", Errors: c.errs}
	}
	return in, nil
}

func decodeTop(body []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, &ErrInvalidJSON{Err: err}
	}
	if top == nil {
		return nil, &ErrInvalidJSON{Err: fmt.Errorf("body must be a JSON object")}
	}
	return top, nil
}

// isFalsyJSON mirrors JavaScript falsiness for the meta field (null, false, 0, "").
func isFalsyJSON(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "false", "0", `""`:
		return true
	}
	return false
}

func parseClientInfo(c *collector, raw json.RawMessage) *ClientInfo {
	m, ok := decodeObject(raw)
	if !ok {
		c.add("clientInfo", "clientInfo 必须是对象")
		return nil
	}
	get := func(k string, max int) *string {
		v, present := m[k]
		return c.optStr("clientInfo."+k, v, present, max)
	}
	return &ClientInfo{Username: get("username", 255), Hostname: get("hostname", 255), ProjectPath: get("project_path", 1000)}
}

func parseGitInfo(c *collector, raw json.RawMessage) *GitInfo {
	m, ok := decodeObject(raw)
	if !ok {
		c.add("gitInfo", "gitInfo 必须是对象")
		return nil
	}
	get := func(k string, max int) *string {
		v, present := m[k]
		s := c.optStr("gitInfo."+k, v, present, max)
		if s == nil {
			return nil
		}
		t := strings.TrimSpace(*s)
		if t == "" {
			return nil
		}
		return &t
	}
	return &GitInfo{Repository: get("repository", 500), Branch: get("branch", 255)}
}

func parseSubmitTasks(c *collector, raw json.RawMessage, now time.Time) []SubmitTask {
	var items []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &items) != nil {
		c.add("tasks", "tasks 必须是数组")
		return nil
	}
	if len(items) == 0 {
		c.add("tasks", "tasks 不能为空")
		return nil
	}
	seen := map[string]bool{}
	out := make([]SubmitTask, 0, len(items))
	for i, item := range items {
		t, ok := parseSubmitTask(c, fmt.Sprintf("tasks[%d]", i), item, now)
		if t.ID != "" && seen[t.ID] {
			c.add(fmt.Sprintf("tasks[%d].id", i), fmt.Sprintf("id %s 在本次请求中重复", t.ID))
		}
		seen[t.ID] = true
		if ok {
			out = append(out, t)
		}
	}
	return out
}

func parseSubmitTask(c *collector, path string, raw json.RawMessage, now time.Time) (SubmitTask, bool) {
	m, ok := decodeObject(raw)
	if !ok {
		c.add(path, path+" 必须是对象")
		return SubmitTask{}, false
	}
	before := len(c.errs)
	t := SubmitTask{
		ID:     c.str(path+".id", m["id"], 255),
		Name:   c.str(path+".name", m["name"], 1000),
		Prompt: c.str(path+".prompt", m["prompt"], 100000),
	}
	t.Status = parseClientStatus(c, path+".status", m["status"])
	t.SpecFile = parseSpecFile(c, path+".spec_file", m["spec_file"])
	if r, present := m["report"]; present && !isNull(r) {
		t.Report = c.optStr(path+".report", r, true, 500)
	}
	t.Messages = parseMessages(c, path+".messages", m["messages"], now)
	t.Logs = parseLogs(c, path+".logs", m["logs"], now)
	if tr, present := m["tags"]; present && !isNull(tr) {
		var tags []string
		if json.Unmarshal(tr, &tags) == nil {
			t.Tags = append([]string{}, tags...)
		}
	}
	if pr, present := m["priority"]; present && !isNull(pr) {
		// TaskEcho accepted any priority on submit; we keep only values the pull sort understands.
		if v, rank, err := ParsePriority(pr); err == nil {
			t.Priority, t.PriorityRank, t.PrioritySet = v, rank, true
		}
	}
	if er, present := m["expires_at"]; present && !isNull(er) {
		var s string
		if json.Unmarshal(er, &s) == nil {
			if ts, ok := ParseTime(s); ok {
				t.ExpiresAt = &ts
			}
		}
	}
	return t, len(c.errs) == before
}

func parseClientStatus(c *collector, field string, raw json.RawMessage) string {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		c.add(field, "status 必须是 pending、done 或 error")
		return ""
	}
	st, ok := NormalizeStatus(s, ClientStatuses...)
	if !ok {
		c.add(field, "status 必须是 pending、done 或 error")
	}
	return st
}

// parseSpecFile accepts null, one string (wrapped into a list) or a list of distinct non-blank
// strings of at most 500 characters.
func parseSpecFile(c *collector, field string, raw json.RawMessage) []string {
	if isNull(raw) {
		return []string{}
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if strings.TrimSpace(one) == "" || jsLen(one) > 500 {
			c.add(field, "spec_file 必须是非空字符串且不超过 500 个字符")
			return nil
		}
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		c.add(field, "spec_file 必须是字符串或字符串数组")
		return nil
	}
	seen := map[string]bool{}
	for i, s := range many {
		switch {
		case strings.TrimSpace(s) == "" || jsLen(s) > 500:
			c.add(fmt.Sprintf("%s[%d]", field, i), "spec_file 必须是非空字符串且不超过 500 个字符")
		case seen[s]:
			c.add(fmt.Sprintf("%s[%d]", field, i), "spec_file 不能重复")
		}
		seen[s] = true
	}
	return append([]string{}, many...)
}

func parseMessages(c *collector, field string, raw json.RawMessage, now time.Time) []Message {
	if isNull(raw) {
		return []Message{}
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		c.add(field, "messages 必须是数组")
		return nil
	}
	out := make([]Message, 0, len(items))
	for i, m := range items {
		p := fmt.Sprintf("%s[%d]", field, i)
		role := parseRole(c, p+".role", m["role"])
		content := c.str(p+".content", m["content"], 100000)
		msg := Message{Role: role, Content: content, CreatedAt: createdAt(m["createdAt"], now)}
		if sr, ok := m["session_id"]; ok && !isNull(sr) {
			var sid string
			if json.Unmarshal(sr, &sid) == nil {
				msg.SessionID = &sid
			}
		}
		out = append(out, msg)
	}
	return out
}

// parseRole accepts user/assistant in any case and returns it UPPERCASE (TaskEcho's storage).
func parseRole(c *collector, field string, raw json.RawMessage) string {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		c.add(field, "role 必须是 user 或 assistant")
		return ""
	}
	r := strings.ToUpper(strings.TrimSpace(s))
	if r != "USER" && r != "ASSISTANT" {
		c.add(field, "role 必须是 user 或 assistant")
	}
	return r
}

func parseLogs(c *collector, field string, raw json.RawMessage, now time.Time) []LogEntry {
	if isNull(raw) {
		return []LogEntry{}
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		c.add(field, "logs 必须是数组")
		return nil
	}
	out := make([]LogEntry, 0, len(items))
	for i, m := range items {
		content := c.str(fmt.Sprintf("%s[%d].content", field, i), m["content"], 100000)
		out = append(out, LogEntry{Content: content, CreatedAt: createdAt(m["createdAt"], now)})
	}
	return out
}

func createdAt(raw json.RawMessage, now time.Time) time.Time {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return now
	}
	if t, ok := ParseTime(s); ok {
		return t
	}
	return now
}
