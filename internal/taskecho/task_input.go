package taskecho

import (
	"encoding/json"
	"strings"
	"time"
)

// TaskFields is a server-side create or edit of a task. Nil pointers mean "not sent" (edit leaves
// the field unchanged); the Clear* flags mean an explicit null.
type TaskFields struct {
	TaskID       string
	Name         *string
	Prompt       *string
	Status       *string
	SpecFile     []string
	SpecFileSet  bool
	Report       *string
	ReportSet    bool
	Tags         []string
	TagsSet      bool
	Priority     any
	PriorityRank int
	PrioritySet  bool
	ExpiresAt    *time.Time
	ExpiresSet   bool
}

// ParseTaskCreate validates a POST …/tasks body (TaskEcho's rules and messages for creating a task).
func ParseTaskCreate(body []byte) (*TaskFields, error) {
	m, err := decodeTop(body)
	if err != nil {
		return nil, err
	}
	f, err := parseTaskFields(m)
	if err != nil {
		return nil, err
	}
	var id string
	if json.Unmarshal(m["taskId"], &id) != nil || strings.TrimSpace(id) == "" {
		return nil, single("taskId", "taskId 不能为空")
	}
	if jsLen(id) > 255 {
		return nil, single("taskId", "taskId 长度不能超过 255 个字符")
	}
	f.TaskID = strings.TrimSpace(id)
	if f.Name == nil {
		return nil, single("name", "name 不能为空")
	}
	if f.Prompt == nil {
		return nil, single("prompt", "prompt 不能为空")
	}
	return f, nil
}

// ParseTaskEdit validates a PUT …/tasks/{taskId} body; every field is optional.
func ParseTaskEdit(body []byte) (*TaskFields, error) {
	m, err := decodeTop(body)
	if err != nil {
		return nil, err
	}
	return parseTaskFields(m)
}

func single(field, msg string) *ValidationError {
	return &ValidationError{Message: msg, Errors: []FieldError{{Field: field, Reason: msg}}}
}

func parseTaskFields(m map[string]json.RawMessage) (*TaskFields, error) {
	f := &TaskFields{}
	for _, k := range []string{"name", "prompt"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
			return nil, single(k, k+" 不能为空")
		}
		max := 1000
		if k == "prompt" {
			max = 100000
		}
		if jsLen(s) > max {
			return nil, single(k, k+" 过长")
		}
		s = strings.TrimSpace(s)
		if k == "name" {
			f.Name = &s
		} else {
			f.Prompt = &s
		}
	}
	if raw, ok := m["status"]; ok && !isNull(raw) {
		var s string
		st, valid := "", false
		if json.Unmarshal(raw, &s) == nil {
			st, valid = NormalizeStatus(s, AllStatuses...)
		}
		if !valid {
			return nil, single("status", "status 必须是 pending, running, done, error, cancelled 之一")
		}
		f.Status = &st
	}
	if err := parseTaskExtras(f, m); err != nil {
		return nil, err
	}
	return f, nil
}

func parseTaskExtras(f *TaskFields, m map[string]json.RawMessage) error {
	if raw, ok := m["spec_file"]; ok {
		f.SpecFileSet = true
		c := &collector{}
		f.SpecFile = parseSpecFile(c, "spec_file", raw)
		if len(c.errs) > 0 {
			return single(c.errs[0].Field, c.errs[0].Reason)
		}
	}
	if raw, ok := m["tags"]; ok {
		f.TagsSet = true
		if !isNull(raw) && json.Unmarshal(raw, &f.Tags) != nil {
			return single("tags", "tags 必须是字符串数组")
		}
		if f.Tags == nil {
			f.Tags = []string{}
		}
	}
	if raw, ok := m["report"]; ok {
		f.ReportSet = true
		var s string
		if !isFalsyJSON(raw) {
			if json.Unmarshal(raw, &s) != nil {
				return single("report", "report 必须是字符串")
			}
			f.Report = &s
		}
	}
	if raw, ok := m["priority"]; ok {
		v, rank, err := ParsePriority(raw)
		if err != nil {
			return single("priority", err.Error())
		}
		f.Priority, f.PriorityRank, f.PrioritySet = v, rank, true
	}
	if raw, ok := m["expires_at"]; ok {
		f.ExpiresSet = true
		if !isNull(raw) {
			var s string
			t, valid := time.Time{}, false
			if json.Unmarshal(raw, &s) == nil {
				t, valid = ParseTime(s)
			}
			if !valid {
				return single("expires_at", "expires_at 必须是有效的日期时间")
			}
			f.ExpiresAt = &t
		}
	}
	return nil
}
