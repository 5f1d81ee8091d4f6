package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
)

// hookAppToken is the demo base of testdata/feishu/taskloom_base.json.
const hookAppToken = "bascnTaskloomDemo"

// hookReceiver is the summary webhook: it answers 500 to the pushes of the groups in down and
// records the record_id of every push it accepts.
type hookReceiver struct {
	srv      *httptest.Server
	down     map[string]bool
	mu       sync.Mutex
	accepted []string
}

func startHookReceiver(t *testing.T, down ...string) *hookReceiver {
	r := &hookReceiver{down: map[string]bool{}}
	for _, g := range down {
		r.down[g] = true
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p webhook.Payload
		if err := json.NewDecoder(req.Body).Decode(&p); err != nil {
			http.Error(w, `{"error":"body must be JSON"}`, http.StatusBadRequest)
			return
		}
		if r.down[p.GroupID] {
			http.Error(w, `{"error":"receiver down"}`, http.StatusInternalServerError)
			return
		}
		r.mu.Lock()
		r.accepted = append(r.accepted, p.RecordID)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.accepted...)
}

// hookFixture is the whole application over the Feishu emulator's demo base (tables emptied)
// and the receiver. Readiness is checked every fraction of a second; a failed push is retried
// only after an hour, so a row that failed once stays failed (and running) during the test.
type hookFixture struct {
	t      *testing.T
	env    *e2e.Env
	emu    *feishuemu.Server
	recv   *hookReceiver
	tables *bitable.Tables
}

func newHookFixture(t *testing.T, down ...string) *hookFixture {
	t.Helper()
	fx, err := feishuemu.LoadFixtureFile(filepath.Join(testenv.RepoRoot(), "testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fx.Apps[0].Tables {
		fx.Apps[0].Tables[i].Records = nil // each test writes the rows it needs
	}
	emu, err := feishuemu.New(feishuemu.Options{}, fx)
	if err != nil {
		t.Fatal(err)
	}
	fsrv := httptest.NewServer(emu.Handler())
	t.Cleanup(fsrv.Close)
	f := &hookFixture{t: t, emu: emu, recv: startHookReceiver(t, down...)}
	base := "https://x.feishu.cn/base/" + hookAppToken + "?table="
	// The webhook page counts deliveries across its namespace: no other test's may be in it.
	f.env = e2e.New(t, e2e.OwnNamespace(t), func(c *config.Config) {
		w := &c.Webhook
		w.FeishuAppID, w.FeishuAppSecret, w.FeishuBaseURL = "cli_console", "console", fsrv.URL
		w.TaskBitableURL, w.WebhookBitableURL = base+"tblTasks", "https://x.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
		w.DramaBitableURL, w.CaptureBitableURL = base+"tblDrama", base+"tblCapture"
		w.SummaryWebhookURL = f.recv.srv.URL
		w.ReadinessBackoff, w.ReadinessBackoffMax, w.RetryBackoff = 200*time.Millisecond, time.Second, time.Hour
	})
	cfg := f.env.Config.Webhook
	fs, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	urls := webhook.URLs{Task: cfg.TaskBitableURL, Webhook: cfg.WebhookBitableURL, Drama: cfg.DramaBitableURL, Capture: cfg.CaptureBitableURL}
	if f.tables, err = bitable.Open(f.env.Context(), fs, urls, webhook.FieldNamesFrom(cfg)); err != nil {
		t.Fatal(err)
	}
	return f
}

var hookDay = time.Date(2025, 12, 17, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)).UnixMilli()

// addTasks writes task rows: TaskID → Status.
func (f *hookFixture) addTasks(statuses map[string]string) {
	f.t.Helper()
	tf := f.tables.F.Task
	var rows []map[string]any
	for id, st := range statuses {
		rows = append(rows, map[string]any{tf.TaskID: id, tf.Status: st, tf.Scene: "盗版筛查", tf.Datetime: hookDay})
	}
	if _, err := f.tables.Client.BatchCreate(f.env.Context(), f.tables.Task, rows); err != nil {
		f.t.Fatal(err)
	}
}

// addRow writes a piracy result row with status, retryCount and lastError and returns the
// workflow ID of its delivery.
func (f *hookFixture) addRow(group, status string, retryCount int, lastError string, taskIDs ...string) string {
	f.t.Helper()
	wf := f.tables.F.Webhook
	id, err := f.tables.Client.Create(f.env.Context(), f.tables.Webhook, map[string]any{
		wf.BizType: webhook.BizPiracyGeneralSearch, wf.Status: status, wf.TaskIDs: webhook.FormatTaskIDs(taskIDs),
		wf.GroupID: group, wf.Date: hookDay, wf.DramaInfo: "{}", wf.RetryCount: retryCount, wf.LastError: lastError,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return webhook.DeliveryID(f.tables.Webhook.TableID, id)
}

// rowStatuses is the result table's Status cells by delivery workflow ID.
func (f *hookFixture) rowStatuses() map[string]any {
	out := map[string]any{}
	for _, r := range f.emu.Records(hookAppToken, f.tables.Webhook.TableID) {
		out[webhook.DeliveryID(f.tables.Webhook.TableID, r.ID)] = r.Fields[f.tables.F.Webhook.Status]
	}
	return out
}

// TestConsoleWebhookPageShowsRealDeliveries runs real WebhookDeliveryWorkflows from a sweep an
// admin starts with the page's button, over four result rows: one whose tasks are finished
// (pushed, success: listed nowhere), one waiting for a running task (listed as delivering with
// the TaskID it waits for), one whose push the receiver refuses (failed with RetryCount 1 and
// the receiver's answer, still running until its retry) and one that had failed twice before
// and is refused again (error after the third failed push, closed).
func TestConsoleWebhookPageShowsRealDeliveries(t *testing.T) {
	f := newHookFixture(t, "kwai_down_U1", "kwai_down_U2")
	f.addTasks(map[string]string{"9101": "success", "9102": "error", "9103": "success", "9104": "running", "9105": "success", "9106": "success"})
	delivered := f.addRow("kwai_ok_U1", "pending", 0, "", "9101", "9102")
	waiting := f.addRow("kwai_wait_U1", "pending", 0, "", "9103", "9104")
	failed := f.addRow("kwai_down_U1", "pending", 0, "", "9105")
	gaveUp := f.addRow("kwai_down_U2", "failed", 2, "summary webhook answered HTTP 502: earlier", "9106")

	b := newBrowser(t, f.env.API.URL)
	b.initAndLogin(adminUser, adminPass)
	b.open("/ui/console/webhook")
	b.submit("#sweep-submit", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已开始扫描") {
		t.Fatalf("sweep now says %q", got)
	}
	want := map[string]any{delivered: "success", waiting: "pending", failed: "failed", gaveUp: "error"}
	e2e.Eventually(t, time.Minute, "the deliveries to write their rows back", func() bool {
		got := f.rowStatuses()
		for id, st := range want {
			if got[id] != st {
				return false
			}
		}
		return true
	})
	if got := f.recv.got(); len(got) != 1 || webhook.DeliveryID(f.tables.Webhook.TableID, got[0]) != delivered {
		t.Fatalf("receiver accepted %v, want only the delivered row", got)
	}

	// Visibility catches up with the workflows' search attributes a moment after they act.
	b.eventuallyText("/ui/console/webhook", "#webhook-running .total", "2")
	b.eventuallyText("/ui/console/webhook", "#webhook-broken .total", "2")
	row := func(section, id string) string { return "#" + section + ` tr[data-workflow="` + id + `"]` }
	b.eventuallyText("/ui/console/webhook", row("webhook-running", waiting), "9104=running")
	if got := b.text(row("webhook-running", waiting)); !strings.Contains(got, "pending") || !strings.Contains(got, "等待就绪") ||
		!strings.Contains(got, "tasks_not_final") || !strings.Contains(got, "TaskIDs not final") {
		t.Errorf("waiting row = %q", got)
	}
	cells := []struct{ sel, retries, status, lastError string }{
		{row("webhook-running", failed), "1", "failed", "summary webhook answered HTTP 500"},
		{row("webhook-broken", failed), "1", "failed", "summary webhook answered HTTP 500"},
		{row("webhook-broken", gaveUp), "3", "error", "gave up after 3 failed pushes"},
	}
	for _, c := range cells {
		if got := b.text(c.sel); !strings.Contains(got, c.status) {
			t.Errorf("%s = %q, want status %s", c.sel, got, c.status)
		}
		if got := strings.TrimSpace(b.text(c.sel + " .retry-count")); got != c.retries {
			t.Errorf("%s RetryCount = %q, want %s", c.sel, got, c.retries)
		}
		if got := b.text(c.sel + " .last-error"); !strings.Contains(got, c.lastError) {
			t.Errorf("%s LastError = %q, want %q", c.sel, got, c.lastError)
		}
	}
	page := b.text("#webhook-running") + b.text("#webhook-broken")
	if strings.Contains(page, delivered) {
		t.Errorf("the delivered row is listed: %q", page)
	}
	if strings.Contains(b.text("#webhook-running"), gaveUp) {
		t.Error("the row that gave up is listed as delivering")
	}
	b.shot("console-webhook-deliveries")
}
