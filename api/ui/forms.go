package ui

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// actor is who the echo service records for a UI action (pulled_by / released_by, audit log).
func actor(c echo.Context) taskecho.Actor {
	if s := sessionFrom(c); s != nil {
		return taskecho.Actor{Name: "ui:" + s.Username}
	}
	return taskecho.Actor{Name: "ui"}
}

// taskBody turns a task form into the JSON body the API's create/edit endpoints take, so the
// form goes through exactly the same parser and validation (echo.ParseTaskCreate/ParseTaskEdit)
// and gets the same messages. Empty priority and expiry mean "none" (null).
func taskBody(c echo.Context, create bool) []byte {
	m := map[string]any{}
	if create {
		m["taskId"] = c.FormValue("task_id")
	}
	for _, k := range []string{"name", "prompt"} {
		if v := c.FormValue(k); v != "" || create {
			m[k] = v
		}
	}
	if v := c.FormValue("status"); v != "" {
		m["status"] = v
	}
	m["tags"] = splitTags(c.FormValue("tags"))
	m["priority"] = priorityValue(c.FormValue("priority"))
	m["expires_at"] = expiryValue(c.FormValue("expires_at"))
	b, _ := json.Marshal(m)
	return b
}

func splitTags(s string) []string {
	out := []string{}
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '，' }) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// priorityValue sends digits as a number (the 1–10 scale) and anything else as a label, so the
// service's ParsePriority judges it.
func priorityValue(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

// expiryValue reads a datetime-local input, which the page labels as UTC, into RFC 3339; a
// value that does not parse is passed through for the service to reject in its own words.
func expiryValue(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

// queueOrNil maps the queue field of move forms: empty means project level.
func queueOrNil(s string) *string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return &s
}

// taskIDs reads the checked boxes of a batch form, bounded by the page size it came from.
func taskIDs(c echo.Context, max int) []string {
	form, err := c.FormParams()
	if err != nil {
		return nil
	}
	ids := form["task_ids"]
	if len(ids) > max {
		ids = ids[:max]
	}
	return ids
}
