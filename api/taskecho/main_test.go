package taskecho_test

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"testing"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is the whole application; rate limits are generous unless a test tightens them.
func env(t *testing.T, opts ...func(*config.Echo)) *e2e.Env {
	t.Helper()
	return e2e.New(t, func(c *config.Config) {
		c.Echo.PullRateLimitPerMinute, c.Echo.PullRateLimitPerHour, c.Echo.PullQuota = 10000, 100000, 1000000
		for _, o := range opts {
			o(&c.Echo)
		}
	})
}

// envelope is TaskEcho's response body.
type envelope struct {
	Success bool           `json:"success"`
	Data    map[string]any `json:"data"`
	Message string         `json:"message"`
	Error   *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
	Timestamp string `json:"timestamp"`
}

func call(t *testing.T, e *e2e.Env, method, path, key string, body any, wantStatus int) envelope {
	t.Helper()
	r := e.Do(method, path, key, body)
	var env envelope
	r.JSON(t, &env)
	if r.Status != wantStatus {
		t.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.Status, wantStatus, r.Body)
	}
	if env.Success != (wantStatus < 400) || env.Timestamp == "" {
		t.Fatalf("%s %s: bad envelope %s", method, path, r.Body)
	}
	return env
}

func wantError(t *testing.T, env envelope, code string) {
	t.Helper()
	if env.Error == nil || env.Error.Code != code {
		t.Fatalf("error %+v, want code %s", env.Error, code)
	}
}

// seg escapes one path segment the way TaskEcho's UI does (encodeURIComponent).
func seg(s string) string { return url.PathEscape(s) }

func submitBody(project, queue string, tasks ...map[string]any) map[string]any {
	return map[string]any{"project_id": project, "project_name": "proj " + project, "queue_id": queue, "queue_name": queue,
		"clientInfo": map[string]any{"username": "u", "hostname": "h", "project_path": "~/p"}, "meta": map[string]any{"prompts": []string{}},
		"tasks": tasks}
}

func ctask(id, status string) map[string]any {
	return map[string]any{"id": id, "name": "task " + id, "prompt": "do " + id, "spec_file": nil, "status": status,
		"report": nil, "messages": []any{}, "logs": []any{}}
}

// createServerTask makes a server task (queue "" = project level).
func createServerTask(t *testing.T, e *e2e.Env, project, queue, id string, extra map[string]any) {
	t.Helper()
	body := map[string]any{"taskId": id, "name": "server " + id, "prompt": "p " + id}
	for k, v := range extra {
		body[k] = v
	}
	path := "/api/v1/projects/" + seg(project) + "/tasks"
	if queue != "" {
		path = "/api/v1/projects/" + seg(project) + "/queues/" + seg(queue) + "/tasks"
	}
	call(t, e, http.MethodPost, path, e.AdminKey, body, http.StatusCreated)
}

func pulledIDs(env envelope) []string {
	var out []string
	for _, x := range env.Data["tasks"].([]any) {
		out = append(out, x.(map[string]any)["task_id"].(string))
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
