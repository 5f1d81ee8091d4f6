package webhook_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/webhook"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// On the emulator with Feishu's limits (2,000-character filters), a piracy row of 60
// ten-digit TaskIDs — a readiness filter of about 3,800 characters in one piece — is delivered
// both by the sweep's batch (ready at the scan) and by its own workflow (waiting first).
func TestRowOfSixtyTaskIDsIsDelivered(t *testing.T) {
	e := newEnv(t)
	var ready, waiting []string
	var last string
	for i := range 60 {
		ready = append(ready, fmt.Sprint(4100000000+i))
		waiting = append(waiting, fmt.Sprint(4200000000+i))
		e.addTask(ready[i], "盗版筛查", "success", nil)
		status := "success"
		if i == 59 {
			status = "running"
		}
		last = e.addTask(waiting[i], "盗版筛查", status, nil)
		if _, err := e.fs.Create(t.Context(), *e.tables.Capture, map[string]any{"TaskID": ready[i], "Scene": "盗版筛查", "Title": "r" + ready[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if n := feishu.Or(feishu.AnyOf("TaskID", ready...).Conditions...).Length(); n <= feishu.MaxFilterChars {
		t.Fatalf("a one-piece filter of %d characters does not test the limit", n)
	}
	r1 := e.addRow(webhook.BizPiracyGeneralSearch, "kwai_B1_U1", ready, nil)
	r2 := e.addRow(webhook.BizPiracyGeneralSearch, "kwai_B2_U1", waiting, nil)
	e.sweep(webhook.RowFilter{})
	if out := e.outcome(r1); out.Status != "success" {
		t.Fatalf("ready row: %+v", out)
	}
	st := e.waitState(r2, func(st webhookwf.DeliveryState) bool { return len(st.Waiting) > 0 })
	if len(st.Waiting) != 1 || st.Waiting[0] != waiting[59]+"=running" {
		t.Fatalf("waiting row state %+v", st)
	}
	e.setTask(last, "success")
	if out := e.outcome(r2); out.Status != "success" {
		t.Fatalf("waiting row: %+v", out)
	}
	e.assertPushedOnce(2)
	for _, p := range e.recv.got() {
		if p.body["record_id"] == r1 && len(p.body["records"].([]any)) != 60 {
			t.Fatalf("ready row pushed %d capture records, want 60", len(p.body["records"].([]any)))
		}
	}
}

// A creator run over 200 finished recordings creates each missing row once (its "does a row
// exist" lookup is split under the filter limit); running it again creates nothing.
func TestVideoCreatorOverTwoHundredRecordings(t *testing.T) {
	e := newEnv(t)
	tasks := make([]map[string]any, 200)
	for i := range tasks {
		tasks[i] = map[string]any{"TaskID": fmt.Sprint(5000000000 + i), "Scene": "视频录屏采集", "Status": "success", "App": "kwai",
			"ItemID": fmt.Sprint("item-", i), "Datetime": dayMs}
	}
	if _, err := e.fs.BatchCreate(t.Context(), e.tables.Task, tasks); err != nil {
		t.Fatal(err)
	}
	// 20 of them already have a row.
	for i := range 20 {
		e.addRow(webhook.BizVideoScreenCapture, "", []string{fmt.Sprint(5000000000 + i*10)}, nil)
	}
	for run := range 2 {
		res, _, err := e.runCreator(webhook.CreatorInput{App: "kwai"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]int{0: 180, 1: 0}[run]
		if res.Video.Created != want || res.Video.Skipped != 200-want {
			t.Fatalf("run %d: %+v, want %d created", run, res.Video, want)
		}
	}
	per := map[string]int{}
	for _, r := range e.rows(webhook.BizVideoScreenCapture) {
		per[r.Fields["TaskIDs"].(string)]++
	}
	for id, n := range per {
		if n != 1 {
			t.Errorf("TaskID %s has %d rows", id, n)
		}
	}
	if len(per) != 200 {
		t.Fatalf("%d recordings have a row, want 200", len(per))
	}
}

// Sweeps every 200 ms plus manual sweeps started at the same time deliver 100 ready rows exactly
// once, and StartAt is written once per row. Search answers arrive up to 400 ms late, so sweeps
// regularly act on a scan taken before another sweep's delivery of the same row finished.
func TestOverlappingSweepsDeliverOnce(t *testing.T) {
	var mu sync.Mutex
	startAt := map[string]int{}
	slow := func(ep, _ string) time.Duration {
		if ep != feishuemu.EPSearch {
			return 0
		}
		return rand.N(400 * time.Millisecond)
	}
	e := newEnv(t, emulator(feishuemu.Options{AnswerDelay: slow, OnWrite: func(table, rec string, fields map[string]any) {
		if _, ok := fields["StartAt"]; ok && table == "tblWebhook" {
			mu.Lock()
			startAt[rec]++
			mu.Unlock()
		}
	}}))
	const rows = 100
	tasks := make([]map[string]any, 0, rows*3)
	for r := range rows {
		ids := []string{fmt.Sprint(6000000000 + r*3), fmt.Sprint(6000000001 + r*3), fmt.Sprint(6000000002 + r*3)}
		for _, id := range ids {
			tasks = append(tasks, map[string]any{"TaskID": id, "Status": "success", "Scene": "单个链接采集", "Datetime": dayMs})
		}
		e.addRow(webhook.BizSingleURLCapture, fmt.Sprintf("g%d", r%7), ids, nil)
	}
	if _, err := e.fs.BatchCreate(t.Context(), e.tables.Task, tasks); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	sweep := func(filter webhook.RowFilter) {
		run, err := webhookwf.StartSweep(ctx, e.temporal(), e.queue(), testenv.Unique("webhook-sweep-"), webhookwf.SweepInputFor(e.Config.Webhook, filter))
		if err == nil {
			err = run.Get(ctx, nil)
		}
		if err != nil && ctx.Err() == nil {
			t.Errorf("sweep: %v", err)
		}
	}
	// The schedule: a sweep every 200 ms, each not waiting for the one before.
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				wg.Add(1)
				go func() { defer wg.Done(); sweep(webhook.RowFilter{}) }()
			}
		}
	}()
	// Manual sweeps (POST /api/v1/webhook/sweeps, --group-id) overlapping them.
	for g := range 21 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(g) * 130 * time.Millisecond)
			sweep(webhook.RowFilter{GroupID: fmt.Sprintf("g%d", g%7)})
		}()
	}
	e.waitSettled(rows, 90*time.Second)
	time.Sleep(time.Second) // sweeps that read the rows before they settled finish now
	close(stop)
	wg.Wait()
	e.assertPushedOnce(rows)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range startAt {
		if n != 1 {
			t.Errorf("StartAt of %s written %d times", id, n)
		}
	}
	if len(startAt) != rows {
		t.Fatalf("StartAt written for %d rows, want %d", len(startAt), rows)
	}
}

// Hyperlink and person cells of the capture table arrive in the shapes Feishu's
// record-structure documentation gives: hyperlinks as
// {link, text}, persons as a list of names; rich text with a mention as its text.
func TestHyperlinkAndPersonValuesArriveAsDocumented(t *testing.T) {
	e := newEnv(t, emulator(feishuemu.Options{Users: map[string]string{"ou_1": "张三", "ou_2": "李四"}}))
	err := e.emu.Load(feishuemu.Fixture{Apps: []feishuemu.AppSpec{{Token: appToken, Tables: []feishuemu.TableSpec{{
		ID: "tblCapture", Name: "capture", Fields: []feishuemu.FieldSpec{
			{Name: "TaskID", Type: feishuemu.TypeText}, {Name: "Scene", Type: feishuemu.TypeSingleSelect},
			{Name: "ItemID", Type: feishuemu.TypeText}, {Name: "CapturedAt", Type: feishuemu.TypeDateTime},
			{Name: "视频链接", Type: feishuemu.TypeURL}, {Name: "负责人", Type: feishuemu.TypeUser}, {Name: "备注", Type: feishuemu.TypeText},
		},
		Records: []feishuemu.RecordSpec{{Fields: map[string]any{"TaskID": "7001", "Scene": "盗版筛查",
			"视频链接": map[string]any{"link": "https://v.example/7001", "text": "视频页"},
			"负责人":  []any{map[string]any{"id": "ou_1"}, map[string]any{"id": "ou_2"}},
			"备注": []any{map[string]any{"type": "text", "text": "请 "},
				map[string]any{"type": "mention", "mentionType": "User", "text": "@张三", "token": "ou_1", "name": "张三"}},
		}}},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.addTask("7001", "盗版筛查", "success", nil)
	rec := e.addRow(webhook.BizPiracyGeneralSearch, "kwai_B7_U7", []string{"7001"}, nil)
	e.sweep(webhook.RowFilter{})
	if out := e.outcome(rec); out.Status != "success" {
		t.Fatalf("outcome %+v", out)
	}
	pushes := e.recv.got()
	if len(pushes) != 1 {
		t.Fatalf("%d pushes", len(pushes))
	}
	r := pushes[0].body["records"].([]any)[0].(map[string]any)
	link, _ := r["视频链接"].(map[string]any)
	if link["link"] != "https://v.example/7001" || link["text"] != "视频页" {
		t.Errorf("hyperlink arrived as %#v, want {link, text}", r["视频链接"])
	}
	if people := fmt.Sprint(r["负责人"]); people != "[张三 李四]" {
		t.Errorf("persons arrived as %#v, want the list [张三 李四]", r["负责人"])
	}
	if r["备注"] != "请 @张三" {
		t.Errorf("rich text arrived as %#v", r["备注"])
	}
}

// A stale sweep, made deterministic: sweep A's scan reads 20 ready rows, but its answer
// arrives only after sweep B has scanned, pushed and written back all of them and their
// delivery workflows have ended. A then claims every row again (the workflow IDs are free) and
// must push none: the re-read shows them delivered. A's request is held for as long as B takes,
// so the worker's Feishu requests get 3 minutes here: under a loaded `make test` B once took
// over the default 30 s, A's request timed out, and its retry read the rows already delivered
// (nothing stale to test).
func TestStaleSweepNeverPushesTwice(t *testing.T) {
	var scans atomic.Int32
	scanning := make(chan struct{})
	release := make(chan struct{})
	// The first search of the result table is A's scan, whatever the task
	// table's searches (escalation, retried or not) did before it.
	e := newEnv(t, emulator(feishuemu.Options{AnswerDelay: func(ep, table string) time.Duration {
		if ep == feishuemu.EPSearch && table == "tblWebhook" && scans.Add(1) == 1 {
			close(scanning)
			<-release
		}
		return 0
	}}), configure(func(w *config.Webhook) { w.FeishuTimeout = 3 * time.Minute }))
	var recs []string
	for r := range 20 {
		id := fmt.Sprint(8000000000 + r)
		e.addTask(id, "单个链接采集", "success", nil)
		recs = append(recs, e.addRow(webhook.BizSingleURLCapture, "g", []string{id}, nil))
	}
	ctx := e.ctx()
	runA := e.startSweep(ctx, webhook.RowFilter{})
	<-scanning // A has read the rows as pending; its answer is held back
	if res := e.sweep(webhook.RowFilter{}); res.Delivered != 20 {
		t.Fatalf("sweep B delivered %+v, want all 20", res)
	}
	for _, rec := range recs {
		if out := e.outcome(rec); out.Status != "success" {
			t.Fatalf("row %s: %+v", rec, out)
		}
	}
	close(release)
	var resA webhook.SweepResult
	if err := runA.Get(ctx, &resA); err != nil {
		t.Fatal(err)
	}
	if resA.Candidates != 20 || resA.Delivered != 0 {
		t.Fatalf("stale sweep A: %+v, want 20 stale candidates and nothing delivered", resA)
	}
	for _, rec := range recs {
		if out := e.outcome(rec); out.Status != "success" {
			t.Fatalf("row %s after A: %+v", rec, out)
		}
	}
	e.assertPushedOnce(20)
}
