//go:build chaos

package faults_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/receiver"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

const chaosAppToken = "bascnTaskloomDemo" // the demo base of testdata/feishu/taskloom_base.json

// Fault: the worker process gets SIGKILL while delivery workflows are in their readiness loop
// (their rows' tasks are still running); while no worker runs the tasks finish; a new worker
// process starts. Load: 20 piracy rows of 3 TaskIDs each, one sweep. Must hold: every row is
// pushed to the summary webhook exactly once and written back (no row left pending, none
// pushed twice).
func TestWorkerSIGKILLMidWebhookReadinessPushesNoRowTwice(t *testing.T) {
	fx, err := feishuemu.LoadFixtureFile(filepath.Join(testenv.RepoRoot(), "testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fx.Apps[0].Tables {
		fx.Apps[0].Tables[i].Records = nil
	}
	emu, err := feishuemu.New(feishuemu.Options{}, fx)
	if err != nil {
		t.Fatal(err)
	}
	fsrv := httptest.NewServer(emu.Handler())
	t.Cleanup(fsrv.Close)
	recv, err := receiver.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	base := "https://chaos.feishu.cn/base/" + chaosAppToken + "?table="
	env := e2e.New(t, func(c *config.Config) {
		w := &c.Webhook
		w.FeishuAppID, w.FeishuAppSecret, w.FeishuBaseURL = "cli_chaos", "chaos", fsrv.URL
		w.TaskBitableURL, w.WebhookBitableURL = base+"tblTasks", "https://chaos.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
		w.DramaBitableURL, w.CaptureBitableURL = base+"tblDrama", base+"tblCapture"
		w.SummaryWebhookURL = recv.URL() + "/summary"
		w.ReadinessBackoff, w.ReadinessBackoffMax, w.RetryBackoff = 200*time.Millisecond, time.Second, time.Second
	})
	env.StopWorker()
	first := startWorkerProcess(t, env.Config)
	ctx := env.Context()
	cfg := env.Config.Webhook
	fs, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target := webhookwf.TargetFrom(cfg)
	tables, err := bitable.Open(ctx, fs, target.URLs, webhook.FieldNamesFrom(cfg))
	if err != nil {
		t.Fatal(err)
	}

	const rows, perRow = 20, 3
	day := time.Date(2025, 12, 17, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)).UnixMilli()
	idBase := time.Now().UnixNano() % 1_000_000 * 1000
	var tasks, cells []map[string]any
	for i := range rows {
		ids := make([]string, perRow)
		for j := range ids {
			ids[j] = fmt.Sprint(idBase + int64(i*perRow+j))
			tasks = append(tasks, map[string]any{tables.F.Task.TaskID: ids[j], tables.F.Task.Status: "running",
				tables.F.Task.Scene: "盗版筛查", tables.F.Task.Datetime: day})
		}
		cells = append(cells, map[string]any{tables.F.Webhook.BizType: webhook.BizPiracyGeneralSearch, tables.F.Webhook.Status: "pending",
			tables.F.Webhook.TaskIDs: webhook.FormatTaskIDs(ids), tables.F.Webhook.GroupID: fmt.Sprintf("kwai_chaos%d_U1", i),
			tables.F.Webhook.Date: day, tables.F.Webhook.DramaInfo: "{}"})
	}
	taskRecords, err := tables.Client.BatchCreate(ctx, tables.Task, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tables.Client.BatchCreate(ctx, tables.Webhook, cells); err != nil {
		t.Fatal(err)
	}

	run, err := env.Platform.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testenv.Unique("chaos-webhook-sweep-"),
		TaskQueue: env.Config.Temporal.TaskQueue}, webhookwf.WebhookResultWorker,
		webhook.SweepInput{Target: target, Filter: webhook.RowFilter{}, Policy: webhookwf.PolicyFrom(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	// Every row's delivery workflow has looked its tasks up at least twice: it is in the loop.
	afterSweep := emu.TotalCalls()
	e2e.Eventually(t, time.Minute, "the delivery workflows to poll readiness", func() bool { return emu.TotalCalls() >= afterSweep+2*rows })
	first.kill()
	if n := len(recv.Received()); n != 0 {
		t.Fatalf("%d rows pushed before their tasks finished", n)
	}
	for _, id := range taskRecords {
		if err := tables.Client.Update(ctx, tables.Task, id, map[string]any{tables.F.Task.Status: webhook.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	startWorkerProcess(t, env.Config)
	restarted := time.Now()

	pending := func() (n int, statuses map[any]int) {
		statuses = map[any]int{}
		for _, rec := range emu.Records(chaosAppToken, "tblWebhook") {
			statuses[rec.Fields[tables.F.Webhook.Status]]++
			if rec.Fields[tables.F.Webhook.Status] == "pending" {
				n++
			}
		}
		return n, statuses
	}
	// A readiness check in flight at the kill is retried after the attempt's 20 s heartbeat
	// timeout, then the readiness backoff; a minute is ample.
	deadline := time.Now().Add(time.Minute)
	for {
		p, statuses := pending()
		if len(recv.Received()) >= rows && p == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: %d pushes for %d rows; result rows by status %v; task rows %v",
				len(recv.Received()), rows, statuses, emu.Records(chaosAppToken, "tblTasks")[:2])
		}
		time.Sleep(200 * time.Millisecond)
	}
	recovered := time.Since(restarted).Round(100 * time.Millisecond)
	time.Sleep(3 * time.Second) // a duplicate push would arrive within a retry backoff
	seen := map[string]int{}
	for _, d := range recv.Received() {
		var body struct {
			RecordID string `json:"record_id"`
		}
		if err := json.Unmarshal(d.Body, &body); err != nil || body.RecordID == "" {
			t.Fatalf("push without record_id: %s", d.Body)
		}
		seen[body.RecordID]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("row %s pushed %d times", id, n)
		}
	}
	if len(seen) != rows {
		t.Errorf("%d distinct rows pushed, want %d", len(seen), rows)
	}
	t.Logf("%d rows waiting on running tasks, worker SIGKILLed mid-loop: each pushed once, all written back %v after the restart", rows, recovered)
}
