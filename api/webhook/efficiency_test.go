package webhook_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// TestEfficiencyThousandReadyRows: one sweep over 1,000 ready piracy rows of 10 TaskIDs each,
// on the emulator with Feishu's limits, costs at most 0.5 Feishu calls per delivered row (one
// set of task searches for all rows, batched re-reads, capture searches and write-backs) and
// pushes every row exactly once.
func TestEfficiencyThousandReadyRows(t *testing.T) {
	if testing.Short() {
		t.Skip("efficiency run skipped in -short")
	}
	e := newEnv(t)
	ctx := t.Context()
	const rows, per = 1000, 10
	tasks := make([]map[string]any, 0, rows*per)
	cells := make([]map[string]any, 0, rows)
	for r := range rows {
		ids := make([]string, per)
		for i := range per {
			ids[i] = fmt.Sprint(1765900000 + r*per + i)
			tasks = append(tasks, map[string]any{"TaskID": ids[i], "Status": "success", "Scene": "盗版筛查", "Datetime": dayMs})
		}
		cells = append(cells, map[string]any{"BizType": webhook.BizPiracyGeneralSearch, "Status": "pending",
			"TaskIDs": webhook.FormatTaskIDs(ids), "GroupID": fmt.Sprintf("kwai_B%d_U1", r), "Date": dayMs, "DramaInfo": "{}"})
	}
	if _, err := e.fs.BatchCreate(ctx, e.tables.Task, tasks); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fs.BatchCreate(ctx, e.tables.Webhook, cells); err != nil {
		t.Fatal(err)
	}
	e.emu.ResetCalls()
	start := time.Now()
	res := e.sweep(webhook.RowFilter{})
	e.waitSettled(rows, 2*time.Minute)
	calls := e.emu.Calls()
	total := e.emu.TotalCalls()
	t.Logf("1000 ready rows x 10 TaskIDs: %d Feishu calls (%.2f per row): %v; sweep %+v; %s",
		total, float64(total)/rows, calls, res, time.Since(start).Round(time.Millisecond))
	if float64(total)/rows > 0.5 {
		t.Fatalf("%.2f Feishu calls per row, want at most 0.5", float64(total)/rows)
	}
	if calls[feishuemu.EPToken] > 1 {
		t.Fatalf("token fetched %d times", calls[feishuemu.EPToken])
	}
	e.assertPushedOnce(rows)
}
