package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// TestRecoverRedeliversErrorRowsSince drives POST /api/v1/webhook/recover: of two error rows
// that ended on the same day, only the one that ended after since is counted by the dry run,
// reset and delivered by the run (with a failed row that ended after since); the other is left
// untouched; the same Idempotency-Key again
// answers 200 with the same run and pushes nothing more; a bad since is a 400 naming it.
func TestRecoverRedeliversErrorRowsSince(t *testing.T) {
	e := newEnv(t)
	key := e.NewKey(auth.PermWrite, "")
	since := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	e.addTask("7001", "视频录屏采集", "success", map[string]any{"ItemID": "it-7001"})
	e.addTask("7002", "视频录屏采集", "success", map[string]any{"ItemID": "it-7002"})
	recent := e.addRow("video_screen_capture", "", []string{"7001"}, map[string]any{"Status": "error", "RetryCount": 3,
		"LastError": "HTTP 500 (gave up after 3 failed pushes)", "EndAt": since.Add(time.Hour).UnixMilli()})
	e.addTask("7003", "视频录屏采集", "success", map[string]any{"ItemID": "it-7003"})
	failed := e.addRow("video_screen_capture", "", []string{"7003"}, map[string]any{"Status": "failed", "RetryCount": 1,
		"LastError": "HTTP 502", "EndAt": since.Add(2 * time.Hour).UnixMilli()})
	old := e.addRow("video_screen_capture", "", []string{"7002"}, map[string]any{"Status": "error", "RetryCount": 3,
		"LastError": "HTTP 500 (gave up after 3 failed pushes)", "EndAt": since.Add(-time.Hour).UnixMilli()})

	post := func(body string, header http.Header) (int, map[string]any) {
		t.Helper()
		r := e.DoHeader(http.MethodPost, "/api/v1/webhook/recover", key, body, header)
		return r.Status, r.Map(t)
	}
	if r := e.Do(http.MethodPost, "/api/v1/webhook/recover", key, `{"since":"yesterday"}`); r.Status != 400 || !strings.Contains(string(r.Body), `"since"`) {
		t.Fatalf("bad since: %d %s", r.Status, r.Body)
	}
	body := `{"since":"2026-01-10T12:00:00Z","until":"2026-01-11T00:00:00Z"}`
	dry := `{"since":"2026-01-10T12:00:00Z","until":"2026-01-11T00:00:00Z","dry_run":true}`
	if code, m := post(dry, nil); code != 200 || m["count"] != float64(2) || len(m["sample"].([]any)) != 2 {
		t.Fatalf("dry run: %d %v", code, m)
	}
	if len(e.recv.got()) != 0 || e.row(recent)["Status"] != "error" {
		t.Fatal("the dry run changed something")
	}

	h := http.Header{"Idempotency-Key": []string{"recover-1"}}
	code, m := post(body, h)
	if code != http.StatusAccepted || m["created"] != true {
		t.Fatalf("run: %d %v", code, m)
	}
	id, _ := m["workflow_id"].(string)
	res, err := webhookwf.RecoverResultOf(e.ctx(), e.temporal(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 2 || res.Reset != 2 || len(res.Rows) != 2 {
		t.Fatalf("recover result %+v", res)
	}
	for _, rec := range []string{recent, failed} {
		if out := e.outcome(rec); out.Status != "success" {
			t.Fatalf("recovered row %s's delivery: %+v", rec, out)
		}
		if f := e.row(rec); f["Status"] != "success" || num(f["RetryCount"]) != 0 {
			t.Fatalf("recovered row %s: %v", rec, f)
		}
	}
	e.assertPushedOnce(2)
	if f := e.row(old); f["Status"] != "error" || num(f["RetryCount"]) != 3 {
		t.Fatalf("the row that ended before since was touched: %v", f)
	}
	e.record(id, "", "recover_reset_one")

	if code, m := post(body, h); code != http.StatusOK || m["workflow_id"] != id || m["created"] != false {
		t.Fatalf("same key again: %d %v", code, m)
	}
	time.Sleep(time.Second)
	e.assertPushedOnce(2)
}
