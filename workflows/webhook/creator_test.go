package webhook_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	wact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/webhook"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

func (e *env) runCreator(in webhook.CreatorInput) (wf.CreatorResult, error) {
	in.URLs = e.target.URLs
	run, err := e.tc.ExecuteWorkflow(e.ctx(), client.StartWorkflowOptions{ID: testenv.Unique("webhook-creator-"), TaskQueue: e.queue}, wf.WebhookResultCreator, in)
	if err != nil {
		e.t.Fatal(err)
	}
	var res wf.CreatorResult
	return res, run.Get(e.ctx(), &res)
}

func (e *env) rows(biz string) []feishuemu.RecordSpec {
	var out []feishuemu.RecordSpec
	for _, r := range e.emu.Records(appToken, "tblWebhook") {
		if r.Fields["BizType"] == biz {
			out = append(out, r)
		}
	}
	return out
}

func TestVideoCreatorOncePerTaskID(t *testing.T) {
	e := newEnv(t)
	e.addTask("1001", "视频录屏采集", "success", map[string]any{"ItemID": "i1", "BookID": "B100", "UserID": "U1"})
	e.addTask("1002", "视频录屏采集", "success", map[string]any{"ItemID": "i2"})
	e.addTask("1003", "视频录屏采集", "running", map[string]any{"ItemID": "i3"})
	e.addTask("1004", "视频录屏采集", "success", nil)                                             // no ItemID
	e.addTask("1005", "视频录屏采集", "success", map[string]any{"ItemID": "i5", "App": "douyin"}) // other app
	for range 3 {
		if _, err := e.runCreator(webhook.CreatorInput{App: "kwai"}); err != nil {
			t.Fatal(err)
		}
	}
	rows := e.rows(webhook.BizVideoScreenCapture)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Fields["TaskIDs"].(string))
		if r.Fields["Status"] != "pending" || r.Fields["Date"] == nil || r.Fields["CreateAt"] == nil {
			t.Fatalf("row %+v", r.Fields)
		}
		if r.Fields["TaskIDs"] == "1001" && (!strings.Contains(r.Fields["DramaInfo"].(string), "示例短剧") || r.Fields["GroupID"] != "kwai_B100_U1") {
			t.Fatalf("drama info / group of 1001: %+v", r.Fields)
		}
		if r.Fields["TaskIDs"] == "1002" && r.Fields["DramaInfo"] != "{}" {
			t.Fatalf("1002 without BookID should get {}: %+v", r.Fields)
		}
	}
	slices.Sort(ids)
	if strings.Join(ids, ",") != "1001,1002" {
		t.Fatalf("video rows for %v, want 1001,1002 once each", ids)
	}
}

func TestSingleURLAggregationAndInvalidFilter(t *testing.T) {
	e := newEnv(t)
	e.addTask("1101", "单个链接采集", "success", map[string]any{"BookID": "B1", "UserID": "U1"})
	e.addTask("1102", "单个链接采集", "failed", map[string]any{"BookID": "B1", "UserID": "U1"})
	e.addTask("1103", "单个链接采集", "success", map[string]any{"BookID": "B2", "UserID": "U1"})
	e.addTask("1104", "单个链接采集", "running", map[string]any{"BookID": "B1", "UserID": "U1"})
	e.addTask("1105", "单个链接采集", "success", map[string]any{"BookID": "B1", "UserID": "U1", "Datetime": dayMs + 86400000})
	res, err := e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true, ScanDate: "2025-12-17"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SingleURL.Created != 2 {
		t.Fatalf("result %+v", res)
	}
	got := map[string]string{}
	for _, r := range e.rows(webhook.BizSingleURLCapture) {
		got[r.Fields["GroupID"].(string)] = r.Fields["TaskIDs"].(string)
	}
	if got["kwai_B1_U1"] != "1101,1102" || got["kwai_B2_U1"] != "1103" {
		t.Fatalf("aggregated rows %v", got)
	}
	// A task of the same group finishing later extends the pending row instead of adding one.
	e.addTask("1106", "单个链接采集", "error", map[string]any{"BookID": "B1", "UserID": "U1"})
	if res, err = e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true, ScanDate: "2025-12-17"}); err != nil || res.SingleURL.Created != 0 || res.SingleURL.Updated != 1 {
		t.Fatalf("second run %+v %v", res, err)
	}
	if rows := e.rows(webhook.BizSingleURLCapture); len(rows) != 2 {
		t.Fatalf("%d rows after second run", len(rows))
	}

	// Status without an "error" option: Feishu answers InvalidFilter and the failure says so.
	fx, _ := feishuemu.LoadFixtureFile(testenv.RepoRoot() + "/testdata/feishu/taskloom_base.json")
	tasks := fx.Apps[0].Tables[0]
	tasks.Records = nil
	for i := range tasks.Fields {
		if tasks.Fields[i].Name == "Status" {
			tasks.Fields[i].Options = []string{"pending", "running", "success", "failed"}
		}
	}
	if err := e.emu.Load(feishuemu.Fixture{Apps: []feishuemu.AppSpec{{Token: appToken, Tables: []feishuemu.TableSpec{tasks}}}}); err != nil {
		t.Fatal(err)
	}
	before := e.emu.Calls()[feishuemu.EPSearch]
	_, err = e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != wact.InvalidFilterType || !strings.Contains(err.Error(), `select field "Status" has no option "error"`) {
		t.Fatalf("want InvalidFilter naming the missing option, got %v", err)
	}
	// video scan (1 search) + single URL scan once: InvalidFilter is not retried.
	if n := e.emu.Calls()[feishuemu.EPSearch] - before; n != 2 {
		t.Fatalf("%d searches, InvalidFilter must not be retried", n)
	}
}

func TestGroupRowsDedupedByBizTypeGroupDate(t *testing.T) {
	e := newEnv(t)
	e.addTask("1201", "综合页搜索", "success", map[string]any{"BookID": "B100", "UserID": "U1"})
	e.addTask("1202", "综合页搜索", "success", map[string]any{"BookID": "B100", "UserID": "U9"}) // same book, same day
	e.addTask("1203", "综合页搜索", "success", map[string]any{"BookID": "B100", "Datetime": dayMs - 86400000})
	e.addTask("1211", "盗版筛查", "running", map[string]any{"ParentTaskID": "1201", "BookID": "B100", "UserID": "U1"})
	e.addTask("1212", "盗版筛查", "running", map[string]any{"ParentTaskID": "1201", "BookID": "B100", "UserID": "U1"})
	e.addTask("1213", "盗版筛查", "running", map[string]any{"ParentTaskID": "1201", "BookID": "B100", "UserID": "U2"})
	for i := range 2 {
		run, err := e.tc.ExecuteWorkflow(e.ctx(), client.StartWorkflowOptions{ID: testenv.Unique(wf.GroupsWorkflowID("1201-")), TaskQueue: e.queue},
			wf.CreateWebhookResultsForGroups, webhook.GroupsInput{URLs: e.target.URLs, ParentTaskID: "1201"})
		if err != nil {
			t.Fatal(err)
		}
		var res webhook.CreateResult
		if err := run.Get(e.ctx(), &res); err != nil {
			t.Fatal(err)
		}
		if want := []int{2, 0}[i]; res.Created != want {
			t.Fatalf("run %d created %d, want %d", i, res.Created, want)
		}
	}
	got := map[string]map[string]any{}
	for _, r := range e.rows(webhook.BizPiracyGeneralSearch) {
		got[r.Fields["GroupID"].(string)] = r.Fields
	}
	g1 := got["kwai_B100_U1"]
	if len(got) != 2 || g1["TaskIDs"] != "1201,1202,1211,1212" || got["kwai_B100_U2"]["TaskIDs"] != "1201,1202,1213" ||
		g1["ParentTaskID"] != "1201" || !strings.Contains(g1["DramaInfo"].(string), "示例短剧") {
		t.Fatalf("group rows %+v", got)
	}
}
