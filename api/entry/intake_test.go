package entry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	entryapi "github.com/taskloom/taskloom/api/entry"
	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/entryprom"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// Missing required fields are 400 naming the field; an unknown workflowId is 404 before anything
// is recorded or started.
func TestApplyValidation(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		field string
		edit  func(map[string]any)
	}{
		{"workflowId", func(b map[string]any) { delete(b, "workflowId") }},
		{"userText", func(b map[string]any) { b["userText"] = "  " }},
		{"historyChunks", func(b map[string]any) { delete(b, "historyChunks") }},
		{"coreEnvelope.metadata.chat_id", func(b map[string]any) { b["coreEnvelope"] = map[string]any{"metadata": map[string]any{}} }},
		{"coreEnvelope.metadata.chat_id", func(b map[string]any) { delete(b, "coreEnvelope") }},
		{"telemetry.channel", func(b map[string]any) { b["telemetry"] = map[string]any{"channel": "fax"} }},
		{"retryMax", func(b map[string]any) { b["retryMax"] = 99 }},
		{"retryMax", func(b map[string]any) { b["retryMax"] = "three" }},
	}
	for _, c := range cases {
		body := f.applyBody("chat-v", "x", nil)
		c.edit(body)
		r := f.env.Do(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
		var e struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		r.JSON(t, &e)
		if r.Status != http.StatusBadRequest || e.Error.Code != "VALIDATION_ERROR" || e.Error.Details["field"] != c.field {
			t.Errorf("%s: %d %s", c.field, r.Status, r.Body)
		}
	}
	if r := f.env.Do(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, "{not json"); r.Status != http.StatusBadRequest {
		t.Errorf("invalid JSON: %d %s", r.Status, r.Body)
	}

	key := testenv.Unique("unknown-")
	body := f.applyBody("chat-v", "x", map[string]any{"workflowId": "no_such_pipeline", "idempotencyKey": key})
	r := f.env.Do(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
	if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "workflowId") {
		t.Fatalf("unknown workflowId: %d %s", r.Status, r.Body)
	}
	if n := f.runsWithKey(key); n != 0 {
		t.Fatalf("an unknown workflowId left %d workflow_runs documents", n)
	}
	if _, err := f.env.Platform.Temporal.DescribeWorkflowExecution(f.env.Context(), entry.TaskID(key), ""); err == nil {
		t.Fatal("an unknown workflowId started a workflow")
	}
	read := f.env.NewKey(auth.PermRead, "")
	if r := f.env.Do(http.MethodPost, "/api/workflows/apply", read, f.applyBody("chat-v", "x", nil)); r.Status != http.StatusForbidden {
		t.Fatalf("apply with a read key: %d", r.Status)
	}
	if r := f.env.Do(http.MethodGet, "/api/workflows/tasks/entry-0123456789abcdef0123456789abcdef", read, nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown task: %d %s", r.Status, r.Body)
	}
}

// A Telegram update delivered twice is one task and one reply; a wrong secret is 401; Telegram's
// 429 retry_after is waited out, not turned into a lost reply.
func TestTelegramWebhook(t *testing.T) {
	f := newFixture(t)
	if r := f.webhook(telegramUpdate(1, 77, "hi"), "wrong"); r.Status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d %s", r.Status, r.Body)
	}
	if r := f.webhook(telegramUpdate(1, 77, "hi"), ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("no secret: %d %s", r.Status, r.Body)
	}

	f.tg.RateLimit(1, 1)
	upd := telegramUpdate(555, 77, "twice")
	a := f.webhook(upd, tgSecret)
	b := f.webhook(upd, tgSecret)
	if a.Status != http.StatusOK || b.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s / %d %s", a.Status, a.Body, b.Status, b.Body)
	}
	id := a.Map(t)["taskId"].(string)
	if b.Map(t)["taskId"] != id || b.Map(t)["duplicate"] != true {
		t.Fatalf("redelivery made another task: %s / %s", a.Body, b.Body)
	}
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	e2e.Eventually(t, 15*time.Second, "the reply after retry_after", func() bool { return len(f.tg.MessagesTo("77")) == 1 })
	if f.tg.RateLimited() != 1 {
		t.Fatalf("429 answers: %d", f.tg.RateLimited())
	}
	c := f.webhook(upd, tgSecret) // delivered a third time, after completion
	if c.Status != http.StatusOK || c.Map(t)["taskId"] != id {
		t.Fatalf("third delivery: %d %s", c.Status, c.Body)
	}
	time.Sleep(time.Second)
	if n := len(f.tg.MessagesTo("77")); n != 1 {
		t.Fatalf("replies: %d", n)
	}
	if n := f.vendor.calls.Load(); n != 1 {
		t.Fatalf("pipeline runs: %d", n)
	}
	if n := f.runsWithKey(entry.BuildKey(entry.ChannelTelegram, f.pipeline, "77", "555")); n != 1 {
		t.Fatalf("workflow_runs documents: %d", n)
	}
	if r := f.webhook(map[string]any{"update_id": 556, "message": map[string]any{"message_id": 1, "chat": map[string]any{"id": 77}}}, tgSecret); r.Status != http.StatusOK || r.Map(t)["ignored"] != true {
		t.Fatalf("update without text: %d %s", r.Status, r.Body)
	}
}

// logBuffer collects JSON log lines safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var m map[string]any
		if line != "" && json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Failures are observable: with Temporal unreachable, apply and the webhook answer 503 with
// Retry-After at once and log queue.enqueue_failed at error level; nothing is left behind.
func TestTemporalDownIs503AndLogged(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()

	logs := &logBuffer{}
	cfg := *f.env.Config
	cfg.Temporal.Address = dead
	cfg.Entry.EnqueueTimeout = time.Second
	tc, err := client.NewLazyClient(client.Options{HostPort: dead})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	p := &platform.Platform{Config: &cfg, Log: slog.New(slog.NewJSONHandler(logs, nil)), Mongo: f.env.Platform.Mongo,
		Temporal: tc, Metrics: prometheus.NewRegistry()}
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		he, ok := err.(*httpx.Error)
		if !ok {
			_ = c.JSON(http.StatusInternalServerError, map[string]any{"error": err.Error()})
			return
		}
		if he.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", "5")
		}
		_ = c.JSON(he.Status, map[string]any{"success": false, "error": he})
	}
	if err := entryapi.Mount(e, httpx.Deps{Platform: p, Authn: auth.Middleware(auth.NewStore(p.Mongo))}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()

	key := testenv.Unique("down-")
	body, _ := json.Marshal(f.applyBody("chat-r5", "into the void", map[string]any{"idempotencyKey": key}))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/workflows/apply", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", f.env.AdminKey)
	start := time.Now()
	r := do(t, req)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("apply with Temporal down: %d %v %s", r.Status, r.Header, r.Body)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("503 took %s", took)
	}
	tgBody, _ := json.Marshal(telegramUpdate(31337, 99, "down too"))
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/telegram/webhook", bytes.NewReader(tgBody))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", tgSecret)
	if r := do(t, req); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("webhook with Temporal down: %d %s", r.Status, r.Body)
	}
	var events []map[string]any
	for _, l := range logs.lines(t) {
		if l["event"] == intake.EventEnqueueFailed {
			events = append(events, l)
		}
	}
	if len(events) != 2 || events[0]["level"] != "ERROR" || events[0]["idempotency_key"] != key || events[1]["channel"] != entry.ChannelTelegram {
		t.Fatalf("queue.enqueue_failed events: %v", events)
	}
	if n := f.runsWithKey(key); n != 0 {
		t.Fatalf("a failed enqueue left %d workflow_runs documents", n)
	}
	// Temporal back (the real env): the caller's retry with the same key is accepted and runs.
	id := f.apply(f.applyBody("chat-r5", "into the void", map[string]any{"idempotencyKey": key}), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
}

// The suspended-task monitor sets its gauges and warns once the count passes the threshold.
func TestSuspendedMonitorWarnsOverThreshold(t *testing.T) {
	f := newFixture(t)
	f.vendor.fail.Store(true)
	id := f.apply(f.applyBody("chat-mon", "stuck", map[string]any{"retryMax": 0}), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(id, entry.StatusSuspended, 30*time.Second)

	logs := &logBuffer{}
	m := &intake.SuspendedMonitor{Tasks: &intake.Tasks{Runs: entrydb.New(f.env.Platform.Mongo), Workflows: entrywf.NewClient(f.env.Platform.Temporal, f.env.Config.Temporal.TaskQueue),
		Visibility: f.env.Platform.Temporal},
		Threshold: 0, Metrics: entryprom.New(prometheus.NewRegistry()), Log: slog.New(slog.NewJSONHandler(logs, nil))}
	e2e.Eventually(t, 10*time.Second, "the monitor to see the suspended task", func() bool {
		n, over, err := m.Check(f.env.Context())
		return err == nil && n >= 1 && over
	})
	found := false
	for _, l := range logs.lines(t) {
		found = found || (l["event"] == intake.EventSuspendedThreshold && l["level"] == "WARN")
	}
	if !found {
		t.Fatalf("no %s warning: %v", intake.EventSuspendedThreshold, logs.lines(t))
	}
	m.Threshold = 1000
	if _, over, err := m.Check(f.env.Context()); err != nil || over {
		t.Fatalf("under the threshold: over=%v err=%v", over, err)
	}
}

// editedUpdate is Telegram's update for an edit of message messageID: an update of its own.
func editedUpdate(updateID, chat, messageID int64, text string) map[string]any {
	return map[string]any{"update_id": updateID, "edited_message": map[string]any{
		"message_id": messageID, "date": time.Now().Unix(), "edit_date": time.Now().Unix(), "text": text,
		"chat": map[string]any{"id": chat, "type": "private"}, "from": map[string]any{"id": chat, "username": "alice"},
	}}
}

// An edited_message is answered 200 and starts nothing by default: no task, no vendor call, no
// second reply.
func TestTelegramEditIsIgnoredByDefault(t *testing.T) {
	f := newFixture(t)
	first := f.webhook(telegramUpdate(700, 78, "helo"), tgSecret)
	id := first.Map(t)["taskId"].(string)
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	e2e.Eventually(t, 10*time.Second, "the reply", func() bool { return len(f.tg.MessagesTo("78")) == 1 })

	r := f.webhook(editedUpdate(701, 78, 707, "hello"), tgSecret)
	if r.Status != http.StatusOK || r.Map(t)["ignored"] != true || r.Map(t)["taskId"] != nil {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	editID := entry.TaskID(entry.BuildKey(entry.ChannelTelegram, f.pipeline, "78", "701"))
	if _, err := f.env.Platform.Temporal.DescribeWorkflowExecution(f.env.Context(), editID, ""); err == nil {
		t.Fatal("the edit started a workflow")
	}
	time.Sleep(time.Second)
	if n, calls := len(f.tg.MessagesTo("78")), f.vendor.calls.Load(); n != 1 || calls != 1 {
		t.Fatalf("after the edit: %d replies, %d vendor calls", n, calls)
	}
}

// With ENTRY_TELEGRAM_EDITS=rerun an edit is a new task with its own run and reply.
func TestTelegramEditRerunsWhenConfigured(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { c.Entry.TelegramEdits = config.TelegramEditsRerun })
	first := f.webhook(telegramUpdate(800, 79, "helo"), tgSecret).Map(t)["taskId"].(string)
	r := f.webhook(editedUpdate(801, 79, 807, "hello"), tgSecret)
	if r.Status != http.StatusOK || r.Map(t)["ignored"] == true {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	edit := r.Map(t)["taskId"].(string)
	if edit == first {
		t.Fatal("the edit found the original task")
	}
	st := f.waitStatus(edit, entry.StatusCompleted, 30*time.Second)
	if st["result"].(map[string]any)["text"] != "echo: hello" {
		t.Fatalf("edit result: %v", st)
	}
	f.waitStatus(first, entry.StatusCompleted, 30*time.Second)
	e2e.Eventually(t, 10*time.Second, "two replies", func() bool { return len(f.tg.MessagesTo("79")) == 2 })
}
