package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// formContext is an Echo context over a posted form.
func formContext(form url.Values) echo.Context {
	req := httptest.NewRequest(http.MethodPost, "/ui/x", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return echo.New().NewContext(req, httptest.NewRecorder())
}

func TestTaskFormGoesThroughTheAPIParser(t *testing.T) {
	c := formContext(url.Values{"task_id": {" t-1 "}, "name": {"Name"}, "prompt": {"do"}, "priority": {"7"},
		"tags": {"a, b，c,,"}, "expires_at": {"2030-01-02T03:04"}, "status": {"ERROR"}})
	f, err := taskecho.ParseTaskCreate(taskBody(c, true))
	if err != nil {
		t.Fatal(err)
	}
	if f.TaskID != "t-1" || *f.Name != "Name" || f.PriorityRank != 7 || strings.Join(f.Tags, "|") != "a|b|c" ||
		*f.Status != "error" || !f.ExpiresAt.Equal(time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)) {
		t.Fatalf("parsed %+v", f)
	}
	// Empty priority and expiry clear them; a bad priority is refused in the API's words.
	f, err = taskecho.ParseTaskEdit(taskBody(formContext(url.Values{"name": {"n"}, "priority": {""}, "expires_at": {""}}), false))
	if err != nil || !f.PrioritySet || f.Priority != nil || !f.ExpiresSet || f.ExpiresAt != nil {
		t.Fatalf("edit clearing: %+v %v", f, err)
	}
	if _, err := taskecho.ParseTaskEdit(taskBody(formContext(url.Values{"priority": {"urgent"}}), false)); err == nil || !strings.Contains(plainError(err), "priority") {
		t.Fatalf("bad priority: %v", err)
	}
}

func TestPullStateLabels(t *testing.T) {
	now := time.Now()
	past, future, lease := now.Add(-time.Minute), now.Add(time.Hour), "l"
	for _, c := range []struct {
		task taskecho.Task
		want string
	}{
		{taskecho.Task{}, "未拉取"},
		{taskecho.Task{PulledAt: &past, LeaseID: &lease, LeaseExpiresAt: &future}, "已拉取"},
		{taskecho.Task{PulledAt: &past}, "已拉取"}, // pushed back or confirmed
		{taskecho.Task{PulledAt: &past, LeaseID: &lease, LeaseExpiresAt: &past}, "已拉取未推送"},
	} {
		if got := pullStateOf(&c.task, now).Label; got != c.want {
			t.Errorf("%+v: %s, want %s", c.task, got, c.want)
		}
	}
}

func TestPullToPushPairsByLease(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pulls := []taskecho.AuditEntry{{At: t0, Details: map[string]any{"lease_id": "a"}}, {At: t0, Details: map[string]any{"lease_id": "b"}}}
	pushes := []taskecho.AuditEntry{
		{At: t0.Add(90 * time.Second), Details: map[string]any{"lease_id": "a"}},
		{At: t0.Add(time.Hour), Details: map[string]any{"lease_id": "unknown"}},
		{At: t0.Add(-time.Hour), Details: map[string]any{"lease_id": "b"}}, // clock skew: ignored
	}
	got := pullToPush(pulls, pushes)
	if len(got) != 1 || got[0] != 90*time.Second {
		t.Fatalf("durations %v", got)
	}
}

// FuzzSafeNext: whatever the next parameter holds, the redirect stays inside the UI.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/ui/", "/ui/projects/a?b=c", "//evil.example/ui/", "/ui/\\evil", "https://evil.example", "", "/uix"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if !strings.HasPrefix(got, "/ui/") || strings.HasPrefix(got, "//") || strings.Contains(got, "\\") {
			t.Fatalf("safeNext(%q) = %q leaves the UI", next, got)
		}
		if u, err := url.Parse(got); err != nil || u.Host != "" || u.Scheme != "" {
			t.Fatalf("safeNext(%q) = %q is not a local path", next, got)
		}
	})
}

// FuzzTaskBody: any form yields a JSON object the API parser accepts or rejects with a
// validation error, never a panic or a JSON syntax error.
func FuzzTaskBody(f *testing.F) {
	f.Add("t", "name", "prompt", "high", "a,b", "2030-01-02T03:04", "done")
	f.Add("", "", "", "11", "，", "not a date", "bogus")
	f.Add("x\x00y", "\xff", "p", "-1", " , ", "2030-13-45T99:99", "")
	f.Fuzz(func(t *testing.T, id, name, prompt, priority, tags, expires, status string) {
		form := url.Values{"task_id": {id}, "name": {name}, "prompt": {prompt}, "priority": {priority},
			"tags": {tags}, "expires_at": {expires}, "status": {status}}
		body := taskBody(formContext(form), true)
		if !json.Valid(body) {
			t.Fatalf("invalid JSON %q", body)
		}
		for _, tag := range splitTags(tags) {
			if tag == "" || strings.TrimSpace(tag) != tag {
				t.Fatalf("splitTags(%q) kept %q", tags, tag)
			}
		}
		if _, err := taskecho.ParseTaskCreate(body); err != nil {
			if msg := plainError(err); msg == "" || !utf8.ValidString(msg) {
				t.Fatalf("no plain message for %v", err)
			}
		}
	})
}
