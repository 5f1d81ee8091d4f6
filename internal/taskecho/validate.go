package taskecho

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FieldError is one validation failure, reported as TaskEcho does: {field, reason}.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// ValidationError carries every failure of one request; the first one names the field.
type ValidationError struct {
	Message string
	Errors  []FieldError
}

func (e *ValidationError) Error() string {
	if len(e.Errors) == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s: %s %s", e.Message, e.Errors[0].Field, e.Errors[0].Reason)
}

// jsLen counts a string as JavaScript's String.length does (UTF-16 code units), because TaskEcho's
// length limits were written against that.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// collector gathers field errors in request order.
type collector struct{ errs []FieldError }

func (c *collector) add(field, reason string) { c.errs = append(c.errs, FieldError{field, reason}) }

// str decodes a required non-blank string with a maximum length.
func (c *collector) str(field string, raw json.RawMessage, max int) string {
	if isNull(raw) {
		c.add(field, field+" 不能为空")
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		c.add(field, field+" 必须是字符串")
		return ""
	}
	if strings.TrimSpace(s) == "" {
		c.add(field, field+" 不能为空")
		return ""
	}
	if jsLen(s) > max {
		c.add(field, fmt.Sprintf("%s 长度不能超过 %d 个字符", field, max))
	}
	return s
}

// optStr decodes an optional string subfield; an explicit null is an error (TaskEcho rule).
func (c *collector) optStr(field string, raw json.RawMessage, present bool, max int) *string {
	if !present {
		return nil
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		c.add(field, field+" 必须是字符串")
		return nil
	}
	if jsLen(s) > max {
		c.add(field, fmt.Sprintf("%s 长度不能超过 %d 个字符", field, max))
	}
	return &s
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// ParseTime accepts the date formats TaskEcho clients send (ISO-8601 with or without a zone,
// a bare date) and returns UTC.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// NormalizeStatus lowercases a status and checks it against allowed.
func NormalizeStatus(s string, allowed ...string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	return s, false
}

// AllStatuses are the five stored statuses; client endpoints accept only ClientStatuses.
var (
	AllStatuses    = []string{StatusPending, StatusRunning, StatusDone, StatusError, StatusCancelled}
	ClientStatuses = []string{StatusPending, StatusDone, StatusError}
)

// decodeObject splits a JSON object into its raw members; ok is false for non-objects.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if isNull(raw) {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	return m, true
}
