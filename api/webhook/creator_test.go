package webhook_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/webhook"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

func TestVideoCreatorOncePerTaskID(t *testing.T) {
	e := newEnv(t)
	e.addTask("1001", "视频录屏采集", "success", map[string]any{"ItemID": "i1", "BookID": "B100", "UserID": "U1"})
	e.addTask("1002", "视频录屏采集", "success", map[string]any{"ItemID": "i2"})
	e.addTask("1003", "视频录屏采集", "running", map[string]any{"ItemID": "i3"})
	e.addTask("1004", "视频录屏采集", "success", nil)                                             // no ItemID
	e.addTask("1005", "视频录屏采集", "success", map[string]any{"ItemID": "i5", "App": "douyin"}) // other app
	for i := range 3 {
		_, run, err := e.runCreator(webhook.CreatorInput{App: "kwai"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			e.record(run.GetID(), run.GetRunID(), "creator_video_rows")
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
	res, run, err := e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true, ScanDate: "2025-12-17"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SingleURL.Created != 2 {
		t.Fatalf("result %+v", res)
	}
	e.record(run.GetID(), run.GetRunID(), "creator_video_and_single_url")
	got := map[string]string{}
	for _, r := range e.rows(webhook.BizSingleURLCapture) {
		got[r.Fields["GroupID"].(string)] = r.Fields["TaskIDs"].(string)
	}
	if got["kwai_B1_U1"] != "1101,1102" || got["kwai_B2_U1"] != "1103" {
		t.Fatalf("aggregated rows %v", got)
	}
	// A task of the same group finishing later extends the pending row instead of adding one.
	e.addTask("1106", "单个链接采集", "error", map[string]any{"BookID": "B1", "UserID": "U1"})
	if res, _, err = e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true, ScanDate: "2025-12-17"}); err != nil || res.SingleURL.Created != 0 || res.SingleURL.Updated != 1 {
		t.Fatalf("second run %+v %v", res, err)
	}
	if rows := e.rows(webhook.BizSingleURLCapture); len(rows) != 2 {
		t.Fatalf("%d rows after second run", len(rows))
	}

	// Status without an "error" option: Feishu answers InvalidFilter and the failure says so.
	tasks := e2e.FeishuDemo(t).Apps[0].Tables[0]
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
	_, run, err = e.runCreator(webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: true})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != webhookact.InvalidFilterType || !strings.Contains(err.Error(), `select field "Status" has no option "error"`) {
		t.Fatalf("want InvalidFilter naming the missing option, got %v", err)
	}
	e.record(run.GetID(), run.GetRunID(), "creator_invalid_filter")
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
	key := e.NewKey(auth.PermWrite, "")
	for i := range 2 {
		r := e.Do(http.MethodPost, "/api/v1/webhook/groups", key, map[string]any{"parent_task_id": "1201"})
		var out struct {
			WorkflowID string               `json:"workflow_id"`
			Result     webhook.CreateResult `json:"result"`
		}
		r.JSON(t, &out)
		if r.Status != http.StatusOK || out.WorkflowID != webhookwf.GroupsWorkflowID("1201") {
			t.Fatalf("run %d: %d %s", i, r.Status, r.Body)
		}
		if want := []int{2, 0}[i]; out.Result.Created != want {
			t.Fatalf("run %d created %d, want %d", i, out.Result.Created, want)
		}
		if i == 0 {
			e.record(out.WorkflowID, "", "groups_creates_rows")
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
