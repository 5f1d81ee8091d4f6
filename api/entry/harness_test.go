package entry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	botToken  = "123456:entry-test-token"
	tgSecret  = "entry-test-secret"
	quotaUser = "entry"
)

// vendor is the pipeline's provider in these tests: POST /reply echoes the user text. It can be
// made to fail (503) or to take a while, and counts its calls.
type vendor struct {
	srv   *httptest.Server
	fail  atomic.Bool
	delay atomic.Int64 // milliseconds
	calls atomic.Int64
	// replies maps a user text to the reply the vendor gives it instead of the echo.
	replies sync.Map
}

func startVendor(t *testing.T) *vendor {
	v := &vendor{}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.calls.Add(1)
		select {
		case <-time.After(time.Duration(v.delay.Load()) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		if v.fail.Load() {
			http.Error(w, `{"error":"vendor down"}`, http.StatusServiceUnavailable)
			return
		}
		var in struct {
			Text    string `json:"text"`
			History []any  `json:"history"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		reply := "echo: " + in.Text
		if r, ok := v.replies.Load(in.Text); ok {
			reply = r.(string)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"reply": reply, "history_len": len(in.History)})
	}))
	t.Cleanup(v.srv.Close)
	return v
}

// fixture is the whole application (e2e) plus a one-step pipeline over the vendor, the quota it
// consumes and the fake Telegram Bot API.
type fixture struct {
	t        *testing.T
	env      *e2e.Env
	vendor   *vendor
	tg       *telegram.Server
	pipeline string
	pstore   *pipelinedb.Store
}

func newFixture(t *testing.T, opts ...e2e.Option) *fixture {
	t.Helper()
	tg, err := telegram.Start("127.0.0.1:0", botToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	name := testenv.Unique("entry_echo_")
	base := func(c *config.Config) {
		c.Entry.RetryMax = 1
		c.Entry.HTTPRetryDelays = []time.Duration{300 * time.Millisecond}
		c.Entry.TelegramRetryBase, c.Entry.TelegramRetryCap = 200*time.Millisecond, time.Second
		c.Entry.IdempotencyWindow = time.Hour // generated keys must not straddle a window in a test
		c.Entry.SuspendedCheckInterval = time.Hour
		c.Entry.TelegramBotToken, c.Entry.TelegramAPIBaseURL = botToken, tg.URL
		c.Entry.TelegramWebhookSecret, c.Entry.TelegramWorkflowID = tgSecret, name
	}
	env := e2e.New(t, append([]e2e.Option{base}, opts...)...)
	f := &fixture{t: t, env: env, vendor: startVendor(t), tg: tg, pipeline: name, pstore: pipelinedb.New(env.Platform.Mongo)}
	ctx := env.Context()
	if _, err := f.pstore.PutProvider(ctx, &pipeline.Provider{Ref: name + "_vendor", BaseURL: f.vendor.srv.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: name + "_vendor", Endpoint: "/reply",
		InputMapping:  map[string]any{"text": "${input_data.user_text}", "history": "${input_data.history_chunks}"},
		OutputMapping: map[string]string{"text": "$.reply", "history_len": "history_len"},
		Retry:         &pipeline.Retry{MaxAttempts: 1}, TimeoutSeconds: 20,
	}}}}
	if _, _, err := f.pstore.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pstore.SetQuota(ctx, quotaUser, quotaUser, 1000); err != nil {
		t.Fatal(err)
	}
	return f
}

// applyBody is a valid WorkflowApplyRequest for the fixture's pipeline.
func (f *fixture) applyBody(chat, text string, extra map[string]any) map[string]any {
	b := map[string]any{
		"workflowId":    f.pipeline,
		"userText":      text,
		"historyChunks": []string{"earlier line"},
		"coreEnvelope":  map[string]any{"metadata": map[string]any{"chat_id": chat}},
		"telemetry":     map[string]any{"channel": "http", "requestId": testenv.Unique("req-")},
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// apply posts an apply request and decodes the answer, checking the status.
func (f *fixture) apply(body map[string]any, want int) map[string]any {
	f.t.Helper()
	r := f.env.Do(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
	if r.Status != want {
		f.t.Fatalf("apply: want %d, got %d %s", want, r.Status, r.Body)
	}
	return r.Map(f.t)
}

// status is GET /api/workflows/tasks/{id}.
func (f *fixture) status(id string) map[string]any {
	f.t.Helper()
	r := f.env.Do(http.MethodGet, "/api/workflows/tasks/"+id, f.env.AdminKey, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("status %s: %d %s", id, r.Status, r.Body)
	}
	return r.Map(f.t)
}

// waitStatus polls the task until it reaches status.
func (f *fixture) waitStatus(id, status string, timeout time.Duration) map[string]any {
	f.t.Helper()
	var last map[string]any
	e2e.Eventually(f.t, timeout, "task "+id+" to be "+status, func() bool {
		last = f.status(id)
		return last["status"] == status
	})
	return last
}

// telegramUpdate is a Telegram Update with a text message in chat.
func telegramUpdate(updateID, chat int64, text string) map[string]any {
	return map[string]any{"update_id": updateID, "message": map[string]any{
		"message_id": updateID + 7, "date": time.Now().Unix(), "text": text,
		"chat": map[string]any{"id": chat, "type": "private"}, "from": map[string]any{"id": chat, "username": "alice"},
		"reply_to_message": map[string]any{"message_id": 3, "text": "what the bot said before", "chat": map[string]any{"id": chat}},
	}}
}

// webhook posts an update with the given secret token.
func (f *fixture) webhook(update any, secret string) *e2e.Response {
	f.t.Helper()
	body, _ := json.Marshal(update)
	req, _ := http.NewRequestWithContext(f.env.Context(), http.MethodPost, f.env.API.URL+"/telegram/webhook", bytesReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	return do(f.t, req)
}

// runsWithKey counts workflow_runs documents holding key.
func (f *fixture) runsWithKey(key string) int64 {
	f.t.Helper()
	n, err := f.env.Platform.Mongo.Collection(entrydb.CollRuns).CountDocuments(f.env.Context(), bson.D{{Key: "idempotency_key", Value: key}})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// saveHistory waits for a workflow to close, checks its cost and records its history when
// RECORD_HISTORIES is set. A Telegram task replies before it closes, so a history taken at the
// reply would miss the workflow's last commands.
func (f *fixture) saveHistory(workflowID, name string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.env.Context(), 30*time.Second)
	defer cancel()
	// The outcome is the test's business; here only the closing matters.
	_ = f.env.Platform.Temporal.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
	histories.Record(f.t, f.env.Platform.Temporal, "entry", workflowID, "", name)
}
