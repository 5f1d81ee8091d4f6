package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// The webhook integration tests run the whole application (internal/testenv/e2e: API, worker,
// Temporal dev server) over the Bitable emulator's demo base and a summary receiver.

func TestMain(m *testing.M) { testenv.Main(m) }

const appToken = e2e.FeishuDemoBase

// receiver is the summary webhook: it records pushes and answers with status.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	pushes []push
}

type push struct {
	at   time.Time
	body map[string]any
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		r.mu.Lock()
		r.pushes = append(r.pushes, push{time.Now(), m})
		st := r.status
		r.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// answer makes the receiver answer status from now on.
func (r *receiver) answer(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

func (r *receiver) got() []push {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]push(nil), r.pushes...)
}

// env is the application with the emulator, the receiver and a Feishu client of the test's own
// (fs, tables) that writes the rows each test needs.
type env struct {
	*e2e.Env
	t      *testing.T
	emu    *feishuemu.Server
	fs     *feishu.Client
	tables *bitable.Tables
	recv   *receiver
	target webhook.Target
}

// setup is what options adjust before the application starts.
type setup struct {
	emulator  feishuemu.Options
	configure []func(*config.Webhook)
}

type option func(*setup)

// emulator starts the emulator with o (write observers, answer delays, users).
func emulator(o feishuemu.Options) option { return func(s *setup) { s.emulator = o } }

// configure adjusts the webhook configuration (policy, record source).
func configure(f func(*config.Webhook)) option {
	return func(s *setup) { s.configure = append(s.configure, f) }
}

// newEnv starts the emulator over the demo base with an empty task table, the receiver and the
// application. Readiness is checked every 300 ms (at most 1 s apart), the readiness deadline is a
// minute and a failed push is retried after 200 ms, unless an option says otherwise.
func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	var s setup
	for _, o := range opts {
		o(&s)
	}
	emu := e2e.StartFeishu(t, s.emulator, e2e.FeishuDemo(t, "tblTasks"))
	recv := newReceiver(t)
	app := e2e.New(t, e2e.WithFeishu(emu), func(c *config.Config) {
		w := &c.Webhook
		w.SummaryWebhookURL = recv.srv.URL
		w.ReadinessBackoff, w.ReadinessBackoffMax, w.ReadinessDeadline, w.RetryBackoff = 300*time.Millisecond, time.Second, time.Minute, 200*time.Millisecond
		for _, f := range s.configure {
			f(w)
		}
	})
	cfg := app.Config.Webhook
	fs, err := feishu.New(feishu.Config{AppID: cfg.FeishuAppID, AppSecret: cfg.FeishuAppSecret, BaseURL: emu.URL(),
		Retry: feishu.RetryPolicy{Attempts: 6, Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Env: app, t: t, emu: emu, fs: fs, recv: recv, target: webhookwf.TargetFrom(cfg)}
	if e.tables, err = bitable.Open(app.Context(), fs, e.target.URLs, webhook.FieldNamesFrom(cfg)); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(e.Context(), 90*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) temporal() client.Client { return e.Platform.Temporal }
func (e *env) queue() string           { return e.Config.Temporal.TaskQueue }

var dayMs = time.Date(2025, 12, 17, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)).UnixMilli()

// addTask writes a task row.
func (e *env) addTask(id, scene, status string, extra map[string]any) string {
	f := map[string]any{"TaskID": id, "Scene": scene, "Status": status, "App": "kwai", "Datetime": dayMs}
	for k, v := range extra {
		f[k] = v
	}
	rid, err := e.fs.Create(context.Background(), e.tables.Task, f)
	if err != nil {
		e.t.Fatal(err)
	}
	return rid
}

func (e *env) setTask(recordID, status string) {
	if err := e.fs.Update(context.Background(), e.tables.Task, recordID, map[string]any{"Status": status}); err != nil {
		e.t.Fatal(err)
	}
}

// addRow writes a pending result row.
func (e *env) addRow(biz, group string, ids []string, extra map[string]any) string {
	f := map[string]any{"BizType": biz, "Status": "pending", "TaskIDs": webhook.FormatTaskIDs(ids), "Date": dayMs}
	if group != "" {
		f["GroupID"] = group
	}
	for k, v := range extra {
		f[k] = v
	}
	rid, err := e.fs.Create(context.Background(), e.tables.Webhook, f)
	if err != nil {
		e.t.Fatal(err)
	}
	return rid
}

func (e *env) row(recordID string) map[string]any {
	for _, r := range e.emu.Records(appToken, "tblWebhook") {
		if r.ID == recordID {
			return r.Fields
		}
	}
	e.t.Fatalf("row %s not found", recordID)
	return nil
}

// rows lists the result rows of a BizType.
func (e *env) rows(biz string) []feishuemu.RecordSpec {
	var out []feishuemu.RecordSpec
	for _, r := range e.emu.Records(appToken, "tblWebhook") {
		if r.Fields["BizType"] == biz {
			out = append(out, r)
		}
	}
	return out
}

// startSweep starts one WebhookResultWorker scan of the rows filter selects, with the
// configured tables and policy.
func (e *env) startSweep(ctx context.Context, filter webhook.RowFilter) client.WorkflowRun {
	e.t.Helper()
	run, err := webhookwf.StartSweep(ctx, e.temporal(), e.queue(), testenv.Unique("webhook-sweep-"), webhookwf.SweepInputFor(e.Config.Webhook, filter))
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

// sweep runs one WebhookResultWorker scan and waits for it.
func (e *env) sweep(filter webhook.RowFilter) webhook.SweepResult {
	e.t.Helper()
	res, _ := e.sweepRun(filter)
	return res
}

// sweepRun is sweep, also returning the run (to record its history).
func (e *env) sweepRun(filter webhook.RowFilter) (webhook.SweepResult, client.WorkflowRun) {
	e.t.Helper()
	ctx := e.ctx()
	run := e.startSweep(ctx, filter)
	var res webhook.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		e.t.Fatal(err)
	}
	return res, run
}

// runCreator runs one WebhookResultCreator over the configured tables and waits for it.
func (e *env) runCreator(in webhook.CreatorInput) (webhookwf.CreatorResult, client.WorkflowRun, error) {
	in.URLs = e.target.URLs
	run, err := webhookwf.StartCreator(e.ctx(), e.temporal(), e.queue(), testenv.Unique("webhook-creator-"), in)
	if err != nil {
		e.t.Fatal(err)
	}
	var res webhookwf.CreatorResult
	return res, run, run.Get(e.ctx(), &res)
}

// outcome waits for a row's delivery workflow.
func (e *env) outcome(recordID string) webhookwf.DeliveryOutcome {
	e.t.Helper()
	out, err := webhookwf.DeliveryOutcomeOf(e.ctx(), e.temporal(), webhook.DeliveryID("tblWebhook", recordID), "")
	if err != nil {
		e.t.Fatalf("delivery of %s: %v", recordID, err)
	}
	return out
}

func (e *env) state(recordID string) webhookwf.DeliveryState {
	e.t.Helper()
	st, err := webhookwf.QueryDeliveryState(e.ctx(), e.temporal(), webhook.DeliveryID("tblWebhook", recordID), "")
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// waitState polls a delivery's state query until ok holds (20 s at most) and returns the last state.
func (e *env) waitState(recordID string, ok func(webhookwf.DeliveryState) bool) webhookwf.DeliveryState {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := e.state(recordID)
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSettled waits until no result row is pending or failed and n pushes arrived.
func (e *env) waitSettled(n int, within time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		open := 0
		for _, r := range e.emu.Records(appToken, "tblWebhook") {
			if st := r.Fields["Status"]; st == "pending" || st == "failed" {
				open++
			}
		}
		if open == 0 && len(e.recv.got()) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("rows not settled after %s (%d pushes)", within, len(e.recv.got()))
}

// assertPushedOnce checks that n distinct rows were pushed, none twice.
func (e *env) assertPushedOnce(n int) {
	e.t.Helper()
	seen := map[string]int{}
	for _, p := range e.recv.got() {
		seen[fmt.Sprint(p.body["record_id"])]++
	}
	for id, c := range seen {
		if c != 1 {
			e.t.Errorf("row %s pushed %d times", id, c)
		}
	}
	if len(seen) != n {
		e.t.Fatalf("%d rows pushed, want %d", len(seen), n)
	}
}

// record writes a finished workflow's history to testdata/histories/webhook/<name>.json when
// RECORD_HISTORIES is set (runID "" is the latest run); workflows/webhook replays it.
func (e *env) record(workflowID, runID, name string) {
	e.t.Helper()
	histories.Record(e.t, e.temporal(), "webhook", workflowID, runID, name)
}

// recordDelivery records the latest run of a row's delivery workflow.
func (e *env) recordDelivery(recordID, name string) {
	e.t.Helper()
	e.record(webhook.DeliveryID("tblWebhook", recordID), "", name)
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }
