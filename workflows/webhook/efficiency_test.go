package webhook_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/feishuemu"
	"github.com/taskloom/taskloom/internal/webhook"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

// TestEfficiencyThousandReadyRows runs the per-row delivery path (the activities a
// WebhookDeliveryWorkflow executes, in the same order) for 1,000 ready piracy rows of 10
// TaskIDs each and reports the emulator's call counter: one batched task search, one capture
// search and one write-back per row, against 10,000 calls for per-TaskID lookups.
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
			ids[i] = fmt.Sprint(100000 + r*per + i)
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
	candidates, err := e.tables.CandidateRows(ctx, webhook.RowFilter{})
	if err != nil || len(candidates) != rows {
		t.Fatalf("scan: %d %v", len(candidates), err)
	}
	for _, row := range candidates {
		res, err := e.acts.Attempt(ctx, wf.AttemptInput{Target: e.target, Row: row})
		if err != nil || !res.Ready || res.Err != "" {
			t.Fatalf("row %s: %+v %v", row.RecordID, res, err)
		}
		tr := webhook.AfterAttempt(row.RetryCount, row.HasStartAt, webhook.Attempt{StartedAt: res.StartedAt, EndedAt: res.EndedAt})
		if err := e.acts.WriteBack(ctx, wf.WriteBackInput{URLs: e.target.URLs, RecordID: row.RecordID, Transition: tr}); err != nil {
			t.Fatal(err)
		}
	}
	calls := e.emu.Calls()
	total := e.emu.TotalCalls()
	t.Logf("1000 ready rows x 10 TaskIDs: %d Feishu calls (%.2f per row; per-TaskID lookups would need %d): %v; %s",
		total, float64(total)/rows, rows*per, calls, time.Since(start).Round(time.Millisecond))
	if total > rows*per/3 {
		t.Fatalf("%d calls is not far below rows x TaskIDs = %d", total, rows*per)
	}
	if calls[feishuemu.EPToken] > 1 {
		t.Fatalf("token fetched %d times", calls[feishuemu.EPToken])
	}
	if got := len(e.recv.got()); got != rows {
		t.Fatalf("%d pushes", got)
	}
}
