package webhook_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	apiwebhook "github.com/taskloom/taskloom/api/webhook"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/feishuemu"
	"github.com/taskloom/taskloom/internal/platform"
)

// TestTaskStatusRetryCountRule drives POST /api/v1/webhook/tasks/{id}/status against the
// emulator: failed → running increments RetryCount; failed past 3 retries becomes error.
func TestTaskStatusRetryCountRule(t *testing.T) {
	fx, err := feishuemu.LoadFixtureFile("../../testdata/feishu/taskloom_base.json")
	if err != nil {
		t.Fatal(err)
	}
	fx.Apps[0].Tables[0].Records = []feishuemu.RecordSpec{
		{Fields: map[string]any{"TaskID": "1", "Status": "failed", "RetryCount": float64(3)}},
	}
	emu, _ := feishuemu.New(feishuemu.Options{}, fx)
	if err := emu.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	cfg := config.Defaults()
	cfg.Webhook.FeishuAppID, cfg.Webhook.FeishuAppSecret, cfg.Webhook.FeishuBaseURL = "cli_api", "sec", emu.URL()
	cfg.Webhook.TaskBitableURL = "https://x.feishu.cn/base/bascnTaskloomDemo?table=tblTasks"
	cfg.Webhook.WebhookBitableURL = "https://x.feishu.cn/base/bascnTaskloomDemo?table=tblWebhook"
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if he, ok := err.(*httpx.Error); ok {
			_ = c.JSON(he.Status, he)
			return
		}
		e.DefaultHTTPErrorHandler(err, c)
	}
	authn := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			auth.Set(c, &auth.Identity{Permission: auth.PermWrite})
			return next(c)
		}
	}
	if err := apiwebhook.Mount(e, httpx.Deps{Platform: &platform.Platform{Config: cfg}, Authn: authn}); err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
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
	rows := emu.Records("bascnTaskloomDemo", "tblTasks")
	if rows[0].Fields["Status"] != "error" || rows[0].Fields["RetryCount"] != float64(4) {
		t.Fatalf("task row %+v", rows[0].Fields)
	}
}
