package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	wact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	"github.com/taskloom/taskloom/internal/webhook/summary"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const appToken = "bascnTaskloomDemo"

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

func (r *receiver) got() []push {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]push(nil), r.pushes...)
}

type env struct {
	t      *testing.T
	emu    *feishuemu.Server
	fs     *feishu.Client
	tables *bitable.Tables
	tc     client.Client
	queue  string
	recv   *receiver
	target webhook.Target
	policy webhook.Policy
	// records is the capture record source the activities' tables read piracy records from
	// (nil: the Feishu capture table).
	records bitable.RecordSource
}

// newEnv starts the emulator, a worker on its own task queue and the receiver; opts adjust the
// env before the worker starts.
func newEnv(t *testing.T, opts ...func(*env)) *env {
	t.Helper()
	return newEnvEmu(t, feishuemu.Options{}, opts...)
}

// newEnvEmu is newEnv with emulator options (write observers, users).
func newEnvEmu(t *testing.T, eo feishuemu.Options, opts ...func(*env)) *env {
	t.Helper()
	fx, err := feishuemu.LoadFixtureFile(testenv.RepoRoot() + "/testdata/feishu/taskloom_base.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range fx.Apps[0].Tables {
		if fx.Apps[0].Tables[i].ID == "tblTasks" {
			fx.Apps[0].Tables[i].Records = nil // each test writes the tasks it needs
		}
	}
	emu, err := feishuemu.New(eo, fx)
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	fs, err := feishu.New(feishu.Config{AppID: "cli_webhook_test", AppSecret: "sec", BaseURL: emu.URL(),
		Retry: feishu.RetryPolicy{Attempts: 6, Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, tc := testenv.Temporal(t)
	e := &env{t: t, emu: emu, fs: fs, tc: tc, queue: testenv.Unique("webhook-"), recv: newReceiver(t)}
	base := "https://x.feishu.cn/base/" + appToken + "?table="
	e.target = webhook.Target{URLs: webhook.URLs{Task: base + "tblTasks", Webhook: "https://x.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook",
		Drama: base + "tblDrama", Capture: base + "tblCapture"}, SummaryURL: e.recv.srv.URL}
	e.policy = webhook.Policy{ReadinessBackoff: 300 * time.Millisecond, ReadinessBackoffMax: time.Second, ReadinessDeadline: time.Minute, RetryBackoff: 200 * time.Millisecond}
	e.tables, err = bitable.Open(context.Background(), fs, e.target.URLs, webhook.DefaultFieldNames())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(e)
	}
	acts := &wact.Activities{
		OpenTables: func(ctx context.Context, u webhook.URLs) (wact.Tables, error) {
			tb, err := bitable.Open(ctx, fs, u, webhook.DefaultFieldNames())
			if err != nil {
				return nil, err
			}
			tb.Records = e.records
			return tb, nil
		},
		Pusher: &summary.Pusher{Client: &http.Client{Timeout: 5 * time.Second}}, Deliveries: wf.DeliveryClient{Client: tc},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if os.Getenv("WEBHOOK_TEST_LOG") != "" {
		acts.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	w := sdkworker.New(tc, e.queue, sdkworker.Options{})
	wf.Register(w, acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return e
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

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

// sweep runs one WebhookResultWorker scan and waits for it.
func (e *env) sweep(filter webhook.RowFilter) webhook.SweepResult {
	ctx := e.ctx()
	run, err := e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testenv.Unique("webhook-sweep-"), TaskQueue: e.queue},
		wf.WebhookResultWorker, webhook.SweepInput{Target: e.target, Filter: filter, Policy: e.policy})
	if err != nil {
		e.t.Fatal(err)
	}
	var res webhook.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		e.t.Fatal(err)
	}
	return res
}

// outcome waits for a row's delivery workflow.
func (e *env) outcome(recordID string) wf.DeliveryOutcome {
	var out wf.DeliveryOutcome
	if err := e.tc.GetWorkflow(e.ctx(), webhook.DeliveryID("tblWebhook", recordID), "").Get(e.ctx(), &out); err != nil {
		e.t.Fatalf("delivery of %s: %v", recordID, err)
	}
	return out
}

func (e *env) state(recordID string) wf.DeliveryState {
	v, err := e.tc.QueryWorkflow(e.ctx(), webhook.DeliveryID("tblWebhook", recordID), "", wf.QueryState)
	if err != nil {
		e.t.Fatal(err)
	}
	var st wf.DeliveryState
	if err := v.Get(&st); err != nil {
		e.t.Fatal(err)
	}
	return st
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }
