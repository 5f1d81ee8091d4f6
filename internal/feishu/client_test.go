package feishu_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/feishu"
)

// setup starts an emulator with the demo base and a client on it. Every client gets a unique
// app id, as production code would not, to prove nothing depends on the SDK's global cache.
func setup(t *testing.T, opts feishuemu.Options) (*feishuemu.Server, *feishu.Client) {
	t.Helper()
	fx, err := feishuemu.LoadFixtureFile("../../testdata/feishu/taskloom_base.json")
	if err != nil {
		t.Fatal(err)
	}
	emu, err := feishuemu.New(opts, fx)
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	c, err := feishu.New(feishu.Config{AppID: "cli_shared", AppSecret: "sec", BaseURL: emu.URL(),
		Retry: feishu.RetryPolicy{Attempts: 5, Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return emu, c
}

const (
	base = "https://x.feishu.cn/base/bascnTaskloomDemo?table=tblTasks"
	wiki = "https://x.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook&view=vewA"
)

func TestResolveBothURLForms(t *testing.T) {
	emu, c := setup(t, feishuemu.Options{})
	ctx := context.Background()
	tb, err := c.Resolve(ctx, base)
	if err != nil || tb != (feishu.Table{AppToken: "bascnTaskloomDemo", TableID: "tblTasks"}) {
		t.Fatalf("base: %+v %v", tb, err)
	}
	for range 2 {
		tw, err := c.Resolve(ctx, wiki)
		if err != nil || tw.AppToken != "bascnTaskloomDemo" || tw.TableID != "tblWebhook" {
			t.Fatalf("wiki: %+v %v", tw, err)
		}
	}
	if n := emu.Calls()[feishuemu.EPWikiNode]; n != 1 {
		t.Fatalf("wiki node resolved %d times, want once", n)
	}
	if _, err := c.Resolve(ctx, "https://x.feishu.cn/wiki/wikMissing?table=t"); err == nil {
		t.Fatal("unknown wiki node resolved")
	}
}

func TestSearchEmptyConditionsSegmentsAndPaging(t *testing.T) {
	emu, c := setup(t, feishuemu.Options{})
	ctx := context.Background()
	tb, _ := c.Resolve(ctx, base)
	recs, err := c.Search(ctx, tb, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{feishu.IsEmpty("ParentTaskID"), feishu.IsNotEmpty("ItemID")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Text("TaskID") != "9003" {
		t.Fatalf("isEmpty/isNotEmpty search: %+v", recs)
	}
	rows := make([]map[string]any, 1201)
	for i := range rows {
		rows[i] = map[string]any{"TaskID": fmt.Sprint(20000 + i), "Status": "pending", "Scene": "盗版筛查"}
	}
	emu.ResetCalls()
	ids, err := c.BatchCreate(ctx, tb, rows)
	if err != nil || len(ids) != 1201 {
		t.Fatalf("batch create: %d %v", len(ids), err)
	}
	if n := emu.Calls()[feishuemu.EPBatchCreate]; n != 3 {
		t.Fatalf("1201 rows took %d batch_create calls, want 3", n)
	}
	got, err := c.Search(ctx, tb, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{feishu.Is("Scene", "盗版筛查"), feishu.Is("Status", "pending")})})
	if err != nil || len(got) != 1201 {
		t.Fatalf("paged search: %d %v", len(got), err)
	}
	if n := emu.Calls()[feishuemu.EPSearch]; n != 3 {
		t.Fatalf("1201 rows took %d searches, want 3", n)
	}
	upd := make([]feishu.Record, len(ids))
	for i, id := range ids {
		upd[i] = feishu.Record{ID: id, Fields: map[string]any{"Status": "success"}}
	}
	if err := c.BatchUpdate(ctx, tb, upd); err != nil {
		t.Fatal(err)
	}
	if n := emu.Calls()[feishuemu.EPBatchUpdate]; n != 3 {
		t.Fatalf("batch update calls %d, want 3", n)
	}
	many := make([]string, 120)
	for i := range many {
		many[i] = fmt.Sprint(20000 + i)
	}
	emu.ResetCalls()
	hits, err := c.SearchAnyOf(ctx, tb, "TaskID", many, []feishu.Condition{feishu.Is("Status", "success")}, feishu.SearchOptions{})
	if err != nil || len(hits) != 120 {
		t.Fatalf("SearchAnyOf: %d %v", len(hits), err)
	}
	// Each search carries as many ids as fit in 2,000 characters of filter (about 30 here).
	filters, _ := feishu.SplitAnyOf("TaskID", many, []feishu.Condition{feishu.Is("Status", "success")})
	if n := emu.Calls()[feishuemu.EPSearch]; n != len(filters) || n > 5 {
		t.Fatalf("120 ids took %d searches, want %d", n, len(filters))
	}
	got2, err := c.BatchGet(ctx, tb, ids[:150])
	if err != nil || len(got2) != 150 || got2[0].Text("TaskID") != "20000" {
		t.Fatalf("batch get: %d %v", len(got2), err)
	}
}

func TestRetriesRateLimitsAndConflicts(t *testing.T) {
	emu, c := setup(t, feishuemu.Options{})
	ctx := context.Background()
	tb, _ := c.Resolve(ctx, base)
	emu.Inject(feishuemu.RateLimit(feishuemu.EPSearch, 2))
	emu.Inject(feishuemu.GatewayLimit(feishuemu.EPSearch, 1))
	recs, err := c.Search(ctx, tb, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{feishu.Is("TaskID", "9001")})})
	if err != nil || len(recs) != 1 {
		t.Fatalf("search after rate limits: %v %v", recs, err)
	}
	if n := emu.Calls()[feishuemu.EPSearch]; n != 4 {
		t.Fatalf("search calls %d, want 4 (3 faults + success)", n)
	}
	emu.Inject(feishuemu.WriteConflict(feishuemu.EPUpdate, 2))
	if err := c.Update(ctx, tb, recs[0].ID, map[string]any{"RetryCount": 1}); err != nil {
		t.Fatalf("update after write conflicts: %v", err)
	}
	got, _ := c.Get(ctx, tb, recs[0].ID)
	if v, _ := feishu.Number(got.Fields["RetryCount"]); v != 1 {
		t.Fatalf("RetryCount = %v", got.Fields["RetryCount"])
	}
	emu.Inject(feishuemu.RateLimit(feishuemu.EPCreate, 10))
	_, err = c.Create(ctx, tb, map[string]any{"TaskID": "x"})
	if !feishu.IsRetryable(err) {
		t.Fatalf("exhausted retries should surface the rate limit, got %v", err)
	}
}

func TestInvalidFilterIsExplainedAndNotRetried(t *testing.T) {
	emu, c := setup(t, feishuemu.Options{})
	ctx := context.Background()
	fx, _ := feishuemu.LoadFixtureFile("../../testdata/feishu/taskloom_base.json")
	tasks := fx.Apps[0].Tables[0]
	for i, f := range tasks.Fields {
		if f.Name == "Status" {
			tasks.Fields[i].Options = []string{"pending", "running", "success", "failed"} // no "error"
		}
	}
	tasks.Records = nil
	if err := emu.Load(feishuemu.Fixture{Apps: []feishuemu.AppSpec{{Token: "bascnTaskloomDemo", Tables: []feishuemu.TableSpec{tasks}}}}); err != nil {
		t.Fatal(err)
	}
	tb, _ := c.Resolve(ctx, base)
	emu.ResetCalls()
	_, err := c.Search(ctx, tb, feishu.SearchOptions{Filter: feishu.And(
		[]feishu.Condition{feishu.Is("Scene", "单个链接采集")}, feishu.AnyOf("Status", "success", "failed", "error"))})
	var ae *feishu.APIError
	if !errors.As(err, &ae) || !ae.InvalidFilter() {
		t.Fatalf("want InvalidFilter, got %v", err)
	}
	if !strings.Contains(err.Error(), `select field "Status" has no option "error"`) || strings.Contains(err.Error(), `"Scene" has no option`) {
		t.Fatalf("explanation does not name the missing option: %v", err)
	}
	if n := emu.Calls()[feishuemu.EPSearch]; n != 1 {
		t.Fatalf("InvalidFilter retried: %d searches", n)
	}
}

// TestSeveralEmulatorsOneAppID reproduces the SDK token-cache quirk: its cache is global and
// keyed by app_id, so a second emulator would receive the first one's token.
func TestSeveralEmulatorsOneAppID(t *testing.T) {
	ctx := context.Background()
	for i := range 3 {
		emu, c := setup(t, feishuemu.Options{})
		tb, _ := c.Resolve(ctx, base)
		if _, err := c.Get(ctx, tb, "recMissing"); err == nil || strings.Contains(err.Error(), "99991663") {
			t.Fatalf("emulator %d: want RecordIdNotFound, got %v", i, err)
		}
		if emu.Calls()[feishuemu.EPToken] != 1 {
			t.Fatalf("emulator %d got %d token requests", i, emu.Calls()[feishuemu.EPToken])
		}
	}
}

func TestPingAndBadCredentials(t *testing.T) {
	emu, err := feishuemu.New(feishuemu.Options{Apps: map[string]string{"cli_p": "right"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	good, _ := feishu.New(feishu.Config{AppID: "cli_p", AppSecret: "right", BaseURL: emu.URL()})
	bad, _ := feishu.New(feishu.Config{AppID: "cli_p", AppSecret: "wrong", BaseURL: emu.URL()})
	if err := good.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := bad.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "10014") {
		t.Fatalf("bad secret: %v", err)
	}
}
