package webhook_test

import (
	"net/http"
	"testing"

	"github.com/taskloom/taskloom/internal/auth"
)

// TestTaskStatusRetryCountRule drives POST /api/v1/webhook/tasks/{id}/status against the
// emulator: failed → running increments RetryCount; failed past 3 retries becomes error.
func TestTaskStatusRetryCountRule(t *testing.T) {
	e := newEnv(t)
	if _, err := e.fs.Create(e.Context(), e.tables.Task, map[string]any{"TaskID": "1", "Status": "failed", "RetryCount": 3}); err != nil {
		t.Fatal(err)
	}
	key := e.NewKey(auth.PermWrite, "")
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		r := e.Do(http.MethodPost, path, key, body)
		return r.Status, r.Map(t)
	}
	if code, m := post("/api/v1/webhook/tasks/1/status", `{"status":"running"}`); code != 200 || m["retry_count"] != float64(4) || m["status"] != "running" {
		t.Fatalf("failed→running: %d %v", code, m)
	}
	if code, m := post("/api/v1/webhook/tasks/1/status", `{"status":"failed"}`); code != 200 || m["status"] != "error" {
		t.Fatalf("failed past 3 retries: %d %v", code, m)
	}
	if code, _ := post("/api/v1/webhook/tasks/99/status", `{"status":"running"}`); code != 404 {
		t.Fatalf("missing task: %d", code)
	}
	if code, _ := post("/api/v1/webhook/tasks/1/status", `{"status":"done"}`); code != 400 {
		t.Fatalf("bad status: %d", code)
	}
	if code, _ := post("/api/v1/webhook/tasks/abc/status", `{"status":"running"}`); code != 400 {
		t.Fatalf("bad id: %d", code)
	}
	rows := e.emu.Records(appToken, "tblTasks")
	if len(rows) != 1 || rows[0].Fields["Status"] != "error" || rows[0].Fields["RetryCount"] != float64(4) {
		t.Fatalf("task rows %+v", rows)
	}
}
