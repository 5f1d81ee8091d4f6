package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/devstack/fakes/receiver"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

const (
	webhookTaskIDsPerRow = 10
	baselineConc         = 8
)

// benchWebhook: ready piracy rows (10 finished TaskIDs each) delivered by one
// WebhookResultWorker sweep — one set of task searches for all rows, each ready row claimed by
// its WebhookDeliveryWorkflow, re-read with batch_get, pushed to the summary webhook and written
// back with batch_update — against the original poller's loop that looks every TaskID up on its own, on the
// same Feishu emulator (with Feishu's filter and batch limits) and receiver. Feishu calls per
// delivered row come from the emulator's counter (target ≤ 0.5); every row must be pushed exactly
// once.
func benchWebhook(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "webhook", Unit: "rows"}
	cfg := r.stack.cfg.Webhook
	fs, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	target := webhookwf.TargetFrom(cfg)
	tables, err := bitable.Open(ctx, fs, target.URLs, webhook.FieldNamesFrom(cfg))
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	rows := r.size(1000, 50)
	res.N = rows
	if err := seedReadyRows(ctx, tables, "bench", rows); err != nil {
		res.Skipped = "seeding rows: " + err.Error()
		return []Result{res}
	}
	emu, recv := r.stack.feishu, r.stack.receiver
	emu.ResetCalls()
	before := len(recv.Received())
	m := r.meter(ctx)
	start := time.Now()
	run, err := r.p.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "bench-webhook-sweep-" + suffix(),
		TaskQueue: r.stack.cfg.Temporal.TaskQueue}, webhookwf.WebhookResultWorker,
		webhook.SweepInput{Target: target, Filter: webhook.RowFilter{}, Policy: webhookwf.PolicyFrom(cfg)})
	if err == nil {
		err = run.Get(ctx, nil)
	}
	if err != nil {
		res.Skipped = "sweep: " + err.Error()
		return []Result{res}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for len(recv.Received())-before < rows && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	got := recv.Received()[before:]
	for !allWrittenBack(emu) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	dups, err := duplicatePushes(got)
	if len(got) != rows || dups > 0 || err != nil {
		res.Skipped = fmt.Sprintf("%d pushes for %d rows (%d duplicated, %v)", len(got), rows, dups, err)
		return []Result{res}
	}
	var lat latencies
	for _, d := range got {
		lat = append(lat, d.At.Sub(start))
	}
	res.Throughput, res.P50Ms, res.P99Ms = lat.fill(rows, elapsed)
	m.charge(ctx, &res)
	sweep := execution{run.GetID(), run.GetRunID()}
	calls := float64(emu.TotalCalls()) / float64(rows)
	counted, mix := emu.TotalCalls(), callMix(emu.Calls())

	b, baseCalls := perTaskIDBaseline(ctx, r, tables, fs, rows)
	b.apply(&res)
	res.Notes = fmt.Sprintf("%.2f Feishu calls per delivered row (%d calls: %s) vs %.2f (each call +%s); latency = scan start to row pushed; elapsed until every row is written back; 0 rows pushed twice",
		calls, counted, mix, baseCalls, r.stack.feishuLatency)
	chargeTemporal(ctx, r, &res, deliveryRuns(tables.WebhookTableID(), got))
	if c, err := unitCost(ctx, r.p.Temporal, sweep); err == nil {
		res.Notes += fmt.Sprintf("; Temporal per row = its WebhookDeliveryWorkflow; the sweep that started them all cost %d actions (%.3f per row) on top",
			c.Actions, float64(c.Actions)/float64(rows))
	}
	return []Result{res}
}

// seedReadyRows writes rows pending piracy rows, each naming 10 tasks that are all finished.
func seedReadyRows(ctx context.Context, t *bitable.Tables, prefix string, rows int) error {
	day := time.Date(2025, 12, 17, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)).UnixMilli()
	base := time.Now().UnixNano() % 1_000_000 * 100_000
	tasks := make([]map[string]any, 0, rows*webhookTaskIDsPerRow)
	cells := make([]map[string]any, 0, rows)
	for i := range rows {
		ids := make([]string, webhookTaskIDsPerRow)
		for j := range ids {
			ids[j] = fmt.Sprint(base + int64(i*webhookTaskIDsPerRow+j))
			tasks = append(tasks, map[string]any{t.F.Task.TaskID: ids[j], t.F.Task.Status: "success", t.F.Task.Scene: "盗版筛查", t.F.Task.Datetime: day})
		}
		cells = append(cells, map[string]any{t.F.Webhook.BizType: webhook.BizPiracyGeneralSearch, t.F.Webhook.Status: "pending",
			t.F.Webhook.TaskIDs: webhook.FormatTaskIDs(ids), t.F.Webhook.GroupID: fmt.Sprintf("kwai_%s%d_U1", prefix, i),
			t.F.Webhook.Date: day, t.F.Webhook.DramaInfo: "{}"})
	}
	if _, err := t.Client.BatchCreate(ctx, t.Task, tasks); err != nil {
		return err
	}
	_, err := t.Client.BatchCreate(ctx, t.Webhook, cells)
	return err
}

// allWrittenBack reads the emulator's table directly (no counted API call): every result row
// has left pending.
func allWrittenBack(emu *feishuemu.Server) bool {
	for _, rec := range emu.Records(benchAppToken, "tblWebhook") {
		if rec.Fields["Status"] == "pending" {
			return false
		}
	}
	return true
}

func duplicatePushes(got []receiver.Delivery) (int, error) {
	seen := map[string]bool{}
	dups := 0
	for _, d := range got {
		var body struct {
			RecordID string `json:"record_id"`
		}
		if err := json.Unmarshal(d.Body, &body); err != nil || body.RecordID == "" {
			return dups, fmt.Errorf("push without record_id: %s", trim(d.Body))
		}
		if seen[body.RecordID] {
			dups++
		}
		seen[body.RecordID] = true
	}
	return dups, nil
}

// deliveryRuns is the delivery workflow of each pushed row (its latest run).
func deliveryRuns(tableID string, got []receiver.Delivery) []execution {
	var out []execution
	for _, d := range got {
		var body struct {
			RecordID string `json:"record_id"`
		}
		if json.Unmarshal(d.Body, &body) == nil {
			out = append(out, execution{workflowID: webhook.DeliveryID(tableID, body.RecordID)})
		}
	}
	return out
}

// perTaskIDBaseline is the original poller's loop: scan the pending rows, then per row look each TaskID up
// with its own search, push, and write the status back. It runs on baselineConc goroutines.
func perTaskIDBaseline(ctx context.Context, r *run, t *bitable.Tables, fs *feishu.Client, rows int) (baseline, float64) {
	b := baseline{name: fmt.Sprintf("seed: 1 lookup per TaskID, %d goroutines", baselineConc)}
	if err := seedReadyRows(ctx, t, "base", rows); err != nil {
		b.err = err
		return b, 0
	}
	r.stack.feishu.ResetCalls()
	start := time.Now()
	candidates, err := t.CandidateRows(ctx, webhook.RowFilter{})
	if err != nil {
		b.err = err
		return b, 0
	}
	push := r.stack.cfg.Webhook.SummaryWebhookURL
	done := make(latencies, len(candidates)) // scan start to row pushed, as for the workflows
	_, _, failed, err := runLoad(ctx, len(candidates), baselineConc, func(ctx context.Context, i int) error {
		defer func() { done[i] = time.Since(start) }()
		row := candidates[i]
		for _, id := range row.TaskIDs {
			if _, err := fs.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{feishu.Is(t.F.Task.TaskID, id)})}); err != nil {
				return err
			}
		}
		body, _ := json.Marshal(map[string]any{"record_id": row.RecordID, "biz_type": row.BizType, "task_ids": row.TaskIDs})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, push, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return fs.Update(ctx, t.Webhook, row.RecordID, map[string]any{t.F.Webhook.Status: "success"})
	})
	if failed > 0 || len(candidates) != rows {
		b.err = fmt.Errorf("%d of %d rows failed (%d candidates): %v", failed, rows, len(candidates), err)
		return b, 0
	}
	b.tput, b.p50, b.p9 = done.fill(rows, time.Since(start))
	return b, float64(r.stack.feishu.TotalCalls()) / float64(rows)
}

// callMix lists the counted calls per endpoint ("records.search=353 …"), token fetches left out.
func callMix(calls map[string]int) string {
	var parts []string
	for ep, n := range calls {
		if ep != feishuemu.EPToken {
			parts = append(parts, fmt.Sprintf("%s=%d", ep, n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
