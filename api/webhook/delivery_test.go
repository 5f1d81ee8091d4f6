package webhook_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/waiting"
	"github.com/taskloom/taskloom/internal/webhook"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// Each BizType: the row's tasks are still running, so the workflow waits; once they finish
// it pushes exactly once and writes success back.
func TestDeliveryPerBizTypeWaitsThenPushes(t *testing.T) {
	e := newEnv(t)
	// piracy_general_search: two child tasks plus the parent, drama info on the row, records
	// from the capture table by TaskID.
	p1 := e.addTask("101", "综合页搜索", "success", map[string]any{"BookID": "B100", "UserID": "U1"})
	p2 := e.addTask("102", "盗版筛查", "running", map[string]any{"ParentTaskID": "101", "BookID": "B100", "UserID": "U1"})
	p3 := e.addTask("103", "盗版筛查", "dispatched", map[string]any{"ParentTaskID": "101", "BookID": "B100", "UserID": "U1"})
	_ = p1
	for _, id := range []string{"102", "103"} {
		if _, err := e.fs.Create(t.Context(), *e.tables.Capture, map[string]any{"TaskID": id, "Scene": "盗版筛查", "ItemID": "pi-" + id, "Title": "t" + id}); err != nil {
			t.Fatal(err)
		}
	}
	piracy := e.addRow(webhook.BizPiracyGeneralSearch, "kwai_B100_U1", []string{"101", "102", "103"},
		map[string]any{"ParentTaskID": "101", "DramaInfo": `{"短剧 ID":"B100","短剧名称":"示例短剧"}`})
	// video_screen_capture: the task row gives ItemID; only the newest capture row is pushed.
	v := e.addTask("201", "视频录屏采集", "running", map[string]any{"ItemID": "it-201", "Params": `{"url":"u"}`})
	for i, at := range []int64{dayMs, dayMs + 60000} {
		if _, err := e.fs.Create(t.Context(), *e.tables.Capture, map[string]any{"TaskID": "201", "Scene": "视频录屏采集", "ItemID": "it-201",
			"Title": []string{"old", "new"}[i], "CapturedAt": at}); err != nil {
			t.Fatal(err)
		}
	}
	video := e.addRow(webhook.BizVideoScreenCapture, "", []string{"201"}, nil)
	// single_url_capture: built from the tasks' statuses (error counts as finished).
	s1 := e.addTask("301", "单个链接采集", "running", map[string]any{"BookID": "B7", "UserID": "U7"})
	e.addTask("302", "单个链接采集", "error", map[string]any{"BookID": "B7", "UserID": "U7"})
	single := e.addRow(webhook.BizSingleURLCapture, "kwai_B7_U7", []string{"301", "302"}, nil)

	res, run := e.sweepRun(webhook.RowFilter{})
	if res.Candidates != 3 || res.Ensured != 3 {
		t.Fatalf("sweep %+v", res)
	}
	e.record(run.GetID(), run.GetRunID(), "sweep_ensures_waiting_rows")
	time.Sleep(1500 * time.Millisecond)
	if n := len(e.recv.got()); n != 0 {
		t.Fatalf("%d pushes while tasks are running", n)
	}
	if st := e.waitState(piracy, func(st webhookwf.DeliveryState) bool { return st.Checks >= 2 }); !strings.Contains(strings.Join(st.Waiting, ","), "102=running") || st.Checks < 2 {
		t.Fatalf("piracy state %+v", st)
	}
	// A second sweep finds the same running workflows (USE_EXISTING), starting nothing new.
	e.sweep(webhook.RowFilter{})
	for _, r := range []string{p2, p3, v, s1} {
		e.setTask(r, "success")
	}
	for _, rec := range []string{piracy, video, single} {
		if out := e.outcome(rec); out.Status != "success" || out.RetryCount != 0 {
			t.Fatalf("row %s outcome %+v", rec, out)
		}
		f := e.row(rec)
		if f["Status"] != "success" || num(f["StartAt"]) == 0 || num(f["EndAt"]) < num(f["StartAt"]) || num(f["RetryCount"]) != 0 {
			t.Fatalf("row %s fields %+v", rec, f)
		}
	}
	pushes := e.recv.got()
	if len(pushes) != 3 {
		t.Fatalf("%d pushes, want 3", len(pushes))
	}
	by := map[string]map[string]any{}
	for _, p := range pushes {
		by[p.body["biz_type"].(string)] = p.body
	}
	pp := by[webhook.BizPiracyGeneralSearch]
	if pp["drama"].(map[string]any)["短剧名称"] != "示例短剧" || len(pp["records"].([]any)) != 2 || pp["group_id"] != "kwai_B100_U1" {
		t.Fatalf("piracy payload %+v", pp)
	}
	vp := by[webhook.BizVideoScreenCapture]
	recs := vp["records"].([]any)
	if len(recs) != 1 || recs[0].(map[string]any)["Title"] != "new" || vp["task"].(map[string]any)["item_id"] != "it-201" {
		t.Fatalf("video payload %+v", vp)
	}
	sp := by[webhook.BizSingleURLCapture]
	if tasks := sp["tasks"].([]any); len(tasks) != 2 || tasks[1].(map[string]any)["status"] != "error" {
		t.Fatalf("single payload %+v", sp)
	}
}

// A failing receiver: three attempts, then error; RetryCount 3, LastError set, StartAt kept
// from the first attempt while EndAt moves with each one.
func TestFailingReceiverEndsInError(t *testing.T) {
	e := newEnv(t)
	e.recv.answer(http.StatusInternalServerError)
	e.addTask("401", "视频录屏采集", "success", map[string]any{"ItemID": "it-401"})
	rec := e.addRow(webhook.BizVideoScreenCapture, "", []string{"401"}, nil)
	e.sweep(webhook.RowFilter{})
	out := e.outcome(rec)
	if out.Status != "error" || out.RetryCount != 3 {
		t.Fatalf("outcome %+v", out)
	}
	f := e.row(rec)
	pushes := e.recv.got()
	if len(pushes) != 3 || f["Status"] != "error" || num(f["RetryCount"]) != 3 || !strings.Contains(f["LastError"].(string), "HTTP 500") {
		t.Fatalf("%d pushes, row %+v", len(pushes), f)
	}
	start, end := time.UnixMilli(num(f["StartAt"])), time.UnixMilli(num(f["EndAt"]))
	if start.After(pushes[0].at) || !start.Before(pushes[1].at) || end.Before(pushes[2].at.Truncate(time.Millisecond)) {
		t.Fatalf("StartAt %v must precede push 1 (%v) and stay before push 2 (%v); EndAt %v must follow push 3 (%v)",
			start, pushes[0].at, pushes[1].at, end, pushes[2].at)
	}
	// The first attempt is the sweep's batch (batch_update), the next two the workflow's own.
	if c := e.emu.Calls(); c[feishuemu.EPUpdate]+c[feishuemu.EPBatchUpdate] != 3 {
		t.Fatalf("%d updates + %d batch updates, want one write-back per attempt", c[feishuemu.EPUpdate], c[feishuemu.EPBatchUpdate])
	}
	e.recordFirstRun(rec, "delivery_claimed_failed_push")
	e.recordDelivery(rec, "delivery_claimed_failing_receiver")
	// error rows are skipped by the next sweep.
	if res := e.sweep(webhook.RowFilter{}); res.Candidates != 0 {
		t.Fatalf("error row swept again: %+v", res)
	}
}

// A missing task row keeps the row waiting until the task appears and finishes.
func TestMissingTaskRowKeepsWaiting(t *testing.T) {
	e := newEnv(t)
	e.addTask("501", "单个链接采集", "success", nil)
	rec := e.addRow(webhook.BizSingleURLCapture, "kwai__", []string{"501", "502"}, nil)
	e.sweep(webhook.RowFilter{})
	time.Sleep(time.Second)
	if st := e.state(rec); len(st.Waiting) != 1 || st.Waiting[0] != "502=missing" {
		t.Fatalf("state %+v", st)
	}
	// What the execution shows while it waits (docs/operations.md "What each execution shows").
	if st := e.state(rec); st.WaitingFor == nil || st.WaitingFor.Reason != waiting.TasksNotFinal ||
		!strings.Contains(st.WaitingFor.Detail, "readiness: 1 of 2 TaskIDs not final: 502=missing") {
		t.Fatalf("waiting_for %+v", st.WaitingFor)
	}
	wfID := webhook.DeliveryID("tblWebhook", rec)
	ex := e.Explain(wfID)
	if !strings.HasPrefix(ex.Summary, "webhook row "+rec+" · "+webhook.BizSingleURLCapture) || !strings.Contains(ex.Details, "501,502") ||
		!strings.HasPrefix(ex.Current, "readiness: 1 of 2 TaskIDs not final: 502=missing") {
		t.Fatalf("user metadata %+v", ex)
	}
	if len(e.recv.got()) != 0 {
		t.Fatal("pushed with a missing task")
	}
	e.addTask("502", "单个链接采集", "success", nil)
	if out := e.outcome(rec); out.Status != "success" {
		t.Fatalf("outcome %+v", out)
	}
	if cur := e.Explain(wfID).Current; cur != "webhook_status success" {
		t.Fatalf("current details once delivered = %q", cur)
	}
	e.recordDelivery(rec, "delivery_waits_then_succeeds")
}

// The readiness deadline ends a row in error with a LastError naming the unfinished tasks.
func TestReadinessDeadline(t *testing.T) {
	e := newEnv(t, configure(func(w *config.Webhook) { w.ReadinessDeadline = 2 * time.Second }))
	e.addTask("601", "单个链接采集", "running", nil)
	rec := e.addRow(webhook.BizSingleURLCapture, "g", []string{"601"}, nil)
	e.sweep(webhook.RowFilter{})
	out := e.outcome(rec)
	f := e.row(rec)
	if out.Status != "error" || f["Status"] != "error" || !strings.Contains(f["LastError"].(string), "readiness deadline") ||
		!strings.Contains(f["LastError"].(string), "601=running") || len(e.recv.got()) != 0 {
		t.Fatalf("outcome %+v row %+v", out, f)
	}
	e.recordDelivery(rec, "delivery_readiness_deadline")
}

// Rate limits and write conflicts on every Feishu call the loop makes are retried and the row
// still ends right.
func TestFaultsAreRetried(t *testing.T) {
	e := newEnv(t)
	e.addTask("701", "单个链接采集", "success", nil)
	rec := e.addRow(webhook.BizSingleURLCapture, "g", []string{"701"}, nil)
	e.emu.Inject(feishuemu.RateLimit(feishuemu.EPSearch, 3))
	e.emu.Inject(feishuemu.GatewayLimit(feishuemu.EPSearch, 1))
	e.emu.Inject(feishuemu.WriteConflict(feishuemu.EPUpdate, 3))
	e.sweep(webhook.RowFilter{})
	if out := e.outcome(rec); out.Status != "success" {
		t.Fatalf("outcome %+v", out)
	}
	if f := e.row(rec); f["Status"] != "success" || len(e.recv.got()) != 1 {
		t.Fatalf("row %+v pushes %d", f, len(e.recv.got()))
	}
}

// POST /api/v1/webhook/sweeps with group_id / date (the CLI's --group-id / --date) narrows the
// scan.
func TestSweepFilters(t *testing.T) {
	e := newEnv(t)
	key := e.NewKey(auth.PermWrite, "")
	e.addRow(webhook.BizSingleURLCapture, "g1", []string{"801"}, nil)
	e.addRow(webhook.BizSingleURLCapture, "g2", []string{"802"}, nil)
	e.addRow(webhook.BizSingleURLCapture, "g1", []string{"803"}, map[string]any{"Date": dayMs + 86400000})
	e.addRow(webhook.BizSingleURLCapture, "g1", []string{"804"}, map[string]any{"Status": "error"})
	sweep := func(body map[string]any) webhook.SweepResult {
		t.Helper()
		r := e.Do(http.MethodPost, "/api/v1/webhook/sweeps", key, body)
		var out struct {
			WorkflowID string              `json:"workflow_id"`
			Result     webhook.SweepResult `json:"result"`
		}
		r.JSON(t, &out)
		if r.Status != http.StatusOK || out.WorkflowID == "" {
			t.Fatalf("sweep %v: %d %s", body, r.Status, r.Body)
		}
		return out.Result
	}
	if res := sweep(map[string]any{"group_id": "g1", "date": "2025-12-17"}); res.Candidates != 1 {
		t.Fatalf("group+date %+v", res)
	}
	if res := sweep(map[string]any{"date": "2025-12-18"}); res.Candidates != 1 {
		t.Fatalf("date %+v", res)
	}
}

// With WEBHOOK_RECORDS_SQLITE set, a piracy_general_search row's Records come from the capture
// side's SQLite database, not from the Feishu capture table.
func TestPiracyRecordsFromSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE capture_records (task_id INTEGER, url TEXT)`,
		`INSERT INTO capture_records VALUES (702, 'https://sqlite/702'), (703, 'https://sqlite/703'), (9, 'https://other')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.Close()
	e := newEnv(t, configure(func(w *config.Webhook) {
		w.RecordsSQLite, w.RecordsSQLiteTable, w.RecordsSQLiteTaskID = path, "capture_records", "task_id"
	}))
	e.addTask("701", "综合页搜索", "success", map[string]any{"BookID": "B700", "UserID": "U7"})
	for _, id := range []string{"702", "703"} {
		e.addTask(id, "盗版筛查", "success", map[string]any{"ParentTaskID": "701", "BookID": "B700", "UserID": "U7"})
		if _, err := e.fs.Create(t.Context(), *e.tables.Capture, map[string]any{"TaskID": id, "Scene": "盗版筛查", "Title": "feishu " + id}); err != nil {
			t.Fatal(err)
		}
	}
	rec := e.addRow(webhook.BizPiracyGeneralSearch, "kwai_B700_U7", []string{"701", "702", "703"},
		map[string]any{"ParentTaskID": "701", "DramaInfo": `{"短剧 ID":"B700"}`})
	e.sweep(webhook.RowFilter{})
	if out := e.outcome(rec); out.Status != "success" {
		t.Fatalf("outcome %+v", out)
	}
	pushes := e.recv.got()
	if len(pushes) != 1 {
		t.Fatalf("%d pushes, want 1", len(pushes))
	}
	var urls []string
	for _, r := range pushes[0].body["records"].([]any) {
		urls = append(urls, fmt.Sprint(r.(map[string]any)["url"]))
	}
	if strings.Join(urls, " ") != "https://sqlite/702 https://sqlite/703" {
		t.Fatalf("records %v, want the two SQLite rows of the row's TaskIDs", pushes[0].body["records"])
	}
}
