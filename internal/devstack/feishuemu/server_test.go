package feishuemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkbitable "github.com/larksuite/oapi-sdk-go/v3/service/bitable/v1"
)

var shanghai, _ = time.LoadLocation("Asia/Shanghai")

func testFixture(n int) Fixture {
	t := TableSpec{ID: "tblT", Name: "tasks", Fields: []FieldSpec{
		{Name: "TaskID", Type: TypeText},
		{Name: "Status", Type: TypeSingleSelect, Options: []string{"pending", "running", "success", "failed"}},
		{Name: "Tags", Type: TypeMultiSelect, Options: []string{"a", "b", "c"}},
		{Name: "RetryCount", Type: TypeNumber},
		{Name: "Datetime", Type: TypeDateTime},
		{Name: "Done", Type: TypeCheckbox},
		{Name: "ItemID", Type: TypeText},
		{Name: "Created", Type: TypeCreatedTime},
	}}
	statuses := []string{"pending", "running", "success", "failed"}
	day := time.Date(2025, 12, 17, 23, 30, 0, 0, shanghai).UnixMilli() // late evening Shanghai = 15:30 UTC
	for i := range n {
		f := map[string]any{"TaskID": fmt.Sprint(1000 + i), "Status": statuses[i%4], "RetryCount": float64(i % 5),
			"Datetime": float64(day + int64(i%2)*int64(time.Hour/time.Millisecond)), "Done": i%2 == 0,
			"Tags": []any{"a"}}
		if i%3 == 0 {
			f["ItemID"] = fmt.Sprintf("item-%d", i)
		}
		t.Records = append(t.Records, RecordSpec{Fields: f})
	}
	return Fixture{Apps: []AppSpec{{Token: "appEmu", Tables: []TableSpec{t}}},
		WikiNodes: []WikiNode{{NodeToken: "wikEmu", ObjToken: "appEmu", ObjType: "bitable"}}}
}

func start(t *testing.T, opts Options, fx ...Fixture) *Server {
	t.Helper()
	s, err := New(opts, fx...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type answer struct {
	status int
	ctype  string
	body   map[string]any
}

func (a answer) code() int { c, _ := a.body["code"].(float64); return int(c) }

func do(t *testing.T, s *Server, method, path, token string, body any) answer {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, s.URL()+path, rd)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v", method, path, err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), m}
}

func token(t *testing.T, s *Server) string {
	a := do(t, s, "POST", "/open-apis/auth/v3/tenant_access_token/internal", "", map[string]string{"app_id": "cli_a", "app_secret": "sec"})
	tok, _ := a.body["tenant_access_token"].(string)
	if a.code() != 0 || !strings.HasPrefix(tok, "t-") || a.body["expire"].(float64) != 7200 {
		t.Fatalf("token answer %+v", a.body)
	}
	return tok
}

const searchPath = "/open-apis/bitable/v1/apps/appEmu/tables/tblT/records/search"

func TestAuthErrors(t *testing.T) {
	s := start(t, Options{Apps: map[string]string{"cli_a": "sec"}}, testFixture(1))
	if a := do(t, s, "POST", "/open-apis/auth/v3/tenant_access_token/internal", "", map[string]string{"app_id": "cli_a", "app_secret": "bad"}); a.code() != 10014 {
		t.Fatalf("wrong secret: %+v", a.body)
	}
	a := do(t, s, "POST", searchPath, "", map[string]any{})
	if a.status != 400 || a.code() != 99991661 || !strings.HasPrefix(a.ctype, "application/json") {
		t.Fatalf("missing token: %d %+v %s", a.status, a.body, a.ctype)
	}
	if a := do(t, s, "POST", searchPath, "t-forged", map[string]any{}); a.status != 400 || a.code() != 99991663 {
		t.Fatalf("invalid token: %d %+v", a.status, a.body)
	}
	if a := do(t, s, "POST", searchPath, token(t, s), map[string]any{}); a.code() != 0 {
		t.Fatalf("valid token: %+v", a.body)
	}
}

func TestSearchPagingWithSDKIterator(t *testing.T) {
	s := start(t, Options{}, testFixture(1203))
	cli := lark.NewClient("cli_paging", "sec", lark.WithOpenBaseUrl(s.URL()), lark.WithLogLevel(larkcore.LogLevelError))
	req := larkbitable.NewSearchAppTableRecordReqBuilder().AppToken("appEmu").TableId("tblT").PageSize(500).
		Body(larkbitable.NewSearchAppTableRecordReqBodyBuilder().Build()).Build()
	it, err := cli.Bitable.V1.AppTableRecord.SearchByIterator(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		ok, rec, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if _, isSeg := rec.Fields["TaskID"].([]any); !isSeg {
			t.Fatalf("search must return text as segments, got %#v", rec.Fields["TaskID"])
		}
		n++
	}
	if n != 1203 || s.Calls()[EPSearch] != 3 {
		t.Fatalf("iterated %d records in %d searches, want 1203 in 3", n, s.Calls()[EPSearch])
	}
	tok := token(t, s)
	last := do(t, s, "POST", searchPath+"?page_size=500", tok, map[string]any{})
	pt := last.body["data"].(map[string]any)["page_token"].(string)
	a := do(t, s, "POST", searchPath+"?page_size=500&page_token="+pt, tok, map[string]any{"filter": map[string]any{"conjunction": "and"}})
	if a.code() != 1254030 {
		t.Fatalf("page token reused with another query: %+v", a.body)
	}
	if a := do(t, s, "POST", searchPath+"?page_size=501", tok, map[string]any{}); a.status != 400 || a.code() == 0 {
		t.Fatalf("page_size 501 accepted: %+v", a.body)
	}
}

func cond(field, op string, vals ...string) map[string]any {
	return map[string]any{"field_name": field, "operator": op, "value": append([]string{}, vals...)}
}

func TestFilterMatrix(t *testing.T) {
	s := start(t, Options{}, testFixture(40))
	tok := token(t, s)
	dayMs := fmt.Sprint(time.Date(2025, 12, 17, 9, 0, 0, 0, shanghai).UnixMilli())
	nextDay := fmt.Sprint(time.Date(2025, 12, 18, 0, 30, 0, 0, shanghai).UnixMilli())
	cases := []struct {
		name   string
		filter map[string]any
		want   int // matching records, -1 = InvalidFilter
	}{
		{"text is", and(cond("TaskID", "is", "1005")), 1},
		{"text contains any-of", and(cond("TaskID", "contains", "100", "101")), 20},
		{"text isNot", and(cond("TaskID", "isNot", "1005")), 39},
		{"isEmpty", and(cond("ItemID", "isEmpty")), 26},
		{"isNotEmpty", and(cond("ItemID", "isNotEmpty")), 14},
		{"isEmpty without value", and(map[string]any{"field_name": "ItemID", "operator": "isEmpty"}), -1},
		{"select is", and(cond("Status", "is", "failed")), 10},
		{"select contains several", and(cond("Status", "contains", "failed", "success")), 20},
		{"select unknown option", and(cond("Status", "is", "error")), -1},
		{"or children", map[string]any{"conjunction": "and", "conditions": []any{cond("Done", "is", "true")},
			"children": []any{map[string]any{"conjunction": "or", "conditions": []any{cond("Status", "is", "pending"), cond("Status", "is", "running")}}}}, 10},
		{"nested children", map[string]any{"conjunction": "and", "children": []any{map[string]any{"conjunction": "or",
			"children": []any{map[string]any{"conjunction": "or"}}}}}, -1},
		{"number greater", and(cond("RetryCount", "isGreater", "2")), 16},
		{"number not a number", and(cond("RetryCount", "isGreater", "x")), -1},
		{"number contains not allowed", and(cond("RetryCount", "contains", "1")), -1},
		{"checkbox", and(cond("Done", "is", "false")), 20},
		{"exact date same day", and(cond("Datetime", "is", "ExactDate", dayMs)), 20},
		{"exact date next day", and(cond("Datetime", "is", "ExactDate", nextDay)), 20},
		{"date isGreater", and(cond("Datetime", "isGreater", "ExactDate", dayMs)), 20},
		{"date isNot not allowed", and(cond("Datetime", "isNot", "ExactDate", dayMs)), -1},
		{"multi select contains", and(cond("Tags", "contains", "a", "b")), 40},
		{"missing conjunction", map[string]any{"conditions": []any{cond("TaskID", "is", "1")}}, -1},
		{"unknown field", and(cond("Nope", "is", "1")), -1},
		{"like not supported", and(cond("TaskID", "like", "1")), -1},
		{"too many values", and(cond("TaskID", "contains", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11")), -1},
	}
	for _, c := range cases {
		a := do(t, s, "POST", searchPath+"?page_size=500", tok, map[string]any{"filter": c.filter})
		if c.want < 0 {
			if a.code() != 1254018 {
				t.Errorf("%s: want InvalidFilter, got %+v", c.name, a.body)
			}
			continue
		}
		if a.code() != 0 {
			t.Errorf("%s: %+v", c.name, a.body)
			continue
		}
		if got := int(a.body["data"].(map[string]any)["total"].(float64)); got != c.want {
			t.Errorf("%s: %d matches, want %d", c.name, got, c.want)
		}
	}
}

func and(conds ...map[string]any) map[string]any {
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	return map[string]any{"conjunction": "and", "conditions": list}
}

func TestWritesLimitsAndFaults(t *testing.T) {
	s := start(t, Options{}, testFixture(0))
	tok := token(t, s)
	base := "/open-apis/bitable/v1/apps/appEmu/tables/tblT/records"
	rows := make([]any, 501)
	for i := range rows {
		rows[i] = map[string]any{"fields": map[string]any{"TaskID": fmt.Sprint(i)}}
	}
	if a := do(t, s, "POST", base+"/batch_create", tok, map[string]any{"records": rows}); a.code() != 1254104 {
		t.Fatalf("501 rows: %+v", a.body)
	}
	a := do(t, s, "POST", base, tok, map[string]any{"fields": map[string]any{"TaskID": "7", "Status": "error"}})
	id := a.body["data"].(map[string]any)["record"].(map[string]any)["record_id"].(string)
	if a.code() != 0 || id == "" {
		t.Fatalf("create: %+v", a.body)
	}
	if a := do(t, s, "POST", base, tok, map[string]any{"fields": map[string]any{"Nope": "x"}}); a.code() != 1254045 {
		t.Fatalf("unknown field: %+v", a.body)
	}
	if a := do(t, s, "POST", base, tok, map[string]any{"fields": map[string]any{"RetryCount": "x"}}); a.code() != 1254061 {
		t.Fatalf("number conv: %+v", a.body)
	}
	s.Inject(WriteConflict(EPUpdate, 1))
	s.Inject(GatewayLimit(EPGet, 1))
	if a := do(t, s, "PUT", base+"/"+id, tok, map[string]any{"fields": map[string]any{"RetryCount": 2}}); a.code() != 1254291 {
		t.Fatalf("injected conflict: %+v", a.body)
	}
	if a := do(t, s, "PUT", base+"/"+id, tok, map[string]any{"fields": map[string]any{"RetryCount": 2}}); a.code() != 0 {
		t.Fatalf("update after fault: %+v", a.body)
	}
	if a := do(t, s, "GET", base+"/"+id, tok, nil); a.status != 429 || a.code() != 99991400 {
		t.Fatalf("gateway limit: %d %+v", a.status, a.body)
	}
	a = do(t, s, "GET", base+"/"+id, tok, nil)
	f := a.body["data"].(map[string]any)["record"].(map[string]any)["fields"].(map[string]any)
	if f["TaskID"] != "7" || f["RetryCount"] != float64(2) || f["Status"] != "error" {
		t.Fatalf("get returns plain text and the new option: %+v", f)
	}
	calls := s.Calls()
	if calls[EPUpdate] != 2 || calls[EPGet] != 2 || calls[EPCreate] != 3 || calls[EPBatchCreate] != 1 {
		t.Fatalf("calls = %v", calls)
	}
}

func TestFixtureFileAndWiki(t *testing.T) {
	fx, err := LoadFixtureFile("../../../testdata/feishu/taskloom_base.json")
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{}, fx)
	tok := token(t, s)
	a := do(t, s, "GET", "/open-apis/wiki/v2/spaces/get_node?token="+fx.WikiNodes[0].NodeToken, tok, nil)
	node := a.body["data"].(map[string]any)["node"].(map[string]any)
	if node["obj_type"] != "bitable" || node["obj_token"] != fx.Apps[0].Token {
		t.Fatalf("get_node: %+v", a.body)
	}
	a = do(t, s, "GET", "/open-apis/bitable/v1/apps/"+fx.Apps[0].Token+"/tables", tok, nil)
	if n := len(a.body["data"].(map[string]any)["items"].([]any)); n != len(fx.Apps[0].Tables) {
		t.Fatalf("tables: %+v", a.body)
	}
	if _, has := a.body["data"].(map[string]any)["page_token"]; has {
		t.Fatal("last page carries page_token")
	}
}

// One case per documented limit (record search / batch_* docs; see
// /work/shared/reference/feishu-openapi.md §1–2): the answer code and HTTP status the real
// server gives.
func TestDocumentedLimits(t *testing.T) {
	s := start(t, Options{}, testFixture(3))
	tok := token(t, s)
	base := "/open-apis/bitable/v1/apps/appEmu/tables/tblT/records"
	is := func(v string) map[string]any {
		return map[string]any{"field_name": "TaskID", "operator": "is", "value": []string{v}}
	}
	conds := func(n int, width int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = is(fmt.Sprintf("%0*d", width, i))
		}
		return out
	}
	filter := func(c []any) map[string]any {
		return map[string]any{"filter": map[string]any{"conjunction": "or", "conditions": c}}
	}
	rows := func(n int, withID bool) map[string]any {
		out := make([]any, n)
		for i := range out {
			r := map[string]any{"fields": map[string]any{"TaskID": fmt.Sprint(i)}}
			if withID {
				r["record_id"] = "recNope"
			}
			out[i] = r
		}
		return map[string]any{"records": out}
	}
	ids := func(n int) map[string]any {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("rec", i)
		}
		return map[string]any{"record_ids": out}
	}
	cases := []struct {
		name, method, path string
		body               any
		status, code       int
	}{
		// search: "filter" JSON ≤ 2,000 characters → 1254107 FilterLengthExceedLimit (HTTP 200).
		{"filter of 30 short conditions fits", "POST", base + "/search", filter(conds(30, 4)), 200, 0},
		{"filter over 2,000 characters", "POST", base + "/search", filter(conds(40, 20)), 200, 1254107},
		// search: conditions ≤ 50, value ≤ 10 items (filter guide) → InvalidFilter.
		// 51 conditions cannot be written in 2,000 characters (the shortest condition is 47), so the
		// length limit answers first; the 50-condition check stays for filters Feishu measures
		// differently.
		{"51 conditions", "POST", base + "/search", filter(conds(51, 1)), 200, 1254107},
		{"11 values", "POST", base + "/search", map[string]any{"filter": map[string]any{"conjunction": "and", "conditions": []any{
			map[string]any{"field_name": "Tags", "operator": "contains", "value": []string{"a", "a", "a", "a", "a", "a", "a", "a", "a", "a", "a"}}}}}, 200, 1254018},
		// search: page_size max 500.
		{"page_size 500", "POST", base + "/search?page_size=500", map[string]any{}, 200, 0},
		{"page_size 501", "POST", base + "/search?page_size=501", map[string]any{}, 400, 1254000},
		// batch_get: record_ids ≤ 100.
		{"batch_get 101 ids", "POST", base + "/batch_get", ids(101), 400, 1254001},
		{"batch_get 100 ids", "POST", base + "/batch_get", ids(100), 200, 0},
		// batch_create / batch_update: ≤ 500 records → 1254104 RecordAddOnceExceedLimit.
		{"batch_create 501", "POST", base + "/batch_create", rows(501, false), 200, 1254104},
		{"batch_update 501", "POST", base + "/batch_update", rows(501, true), 200, 1254104},
	}
	for _, c := range cases {
		a := do(t, s, c.method, c.path, tok, c.body)
		if a.status != c.status || a.code() != c.code {
			t.Errorf("%s: HTTP %d code %d (%v), want HTTP %d code %d", c.name, a.status, a.code(), a.body["msg"], c.status, c.code)
		}
	}
}

// One case per field type: the read shape search returns (record-structure doc, search
// response example; reference §2 "Value shapes").
func TestFieldValueShapes(t *testing.T) {
	fx := Fixture{Apps: []AppSpec{{Token: "appEmu", Tables: []TableSpec{{ID: "tblV", Name: "values", Fields: []FieldSpec{
		{Name: "Text", Type: TypeText}, {Name: "Rich", Type: TypeText}, {Name: "Num", Type: TypeNumber},
		{Name: "One", Type: TypeSingleSelect, Options: []string{"x"}}, {Name: "Many", Type: TypeMultiSelect},
		{Name: "Date", Type: TypeDateTime}, {Name: "Check", Type: TypeCheckbox}, {Name: "People", Type: TypeUser},
		{Name: "Link", Type: TypeURL}, {Name: "Empty", Type: TypeText},
	}, Records: []RecordSpec{{ID: "recV", Fields: map[string]any{
		"Text": "plain", "Num": float64(3), "One": "x", "Many": []any{"a", "b"}, "Date": float64(1765900800000), "Check": true,
		"Rich": []any{map[string]any{"type": "text", "text": "see "},
			map[string]any{"type": "mention", "mentionType": "User", "text": "@张三", "token": "ou_1", "name": "张三"},
			map[string]any{"type": "url", "text": "site", "link": "https://x.example"}},
		"People": []any{map[string]any{"id": "ou_1"}, map[string]any{"id": "ou_2", "name": "李四"}},
		"Link":   map[string]any{"link": "https://v.example/1", "text": "视频页"},
	}}}}}}}}
	s := start(t, Options{Users: map[string]string{"ou_1": "张三"}}, fx)
	tok := token(t, s)
	a := do(t, s, "POST", "/open-apis/bitable/v1/apps/appEmu/tables/tblV/records/search", tok, map[string]any{})
	items := a.body["data"].(map[string]any)["items"].([]any)
	got := items[0].(map[string]any)["fields"].(map[string]any)
	want := map[string]string{
		"Text":   `[{"text":"plain","type":"text"}]`,
		"Rich":   `[{"text":"see ","type":"text"},{"mentionType":"User","name":"张三","text":"@张三","token":"ou_1","type":"mention"},{"link":"https://x.example","text":"site","type":"url"}]`,
		"Num":    `3`,
		"One":    `"x"`,
		"Many":   `["a","b"]`,
		"Date":   `1765900800000`,
		"Check":  `true`,
		"People": `[{"avatar_url":"","email":"","en_name":"张三","id":"ou_1","name":"张三"},{"avatar_url":"","email":"","en_name":"李四","id":"ou_2","name":"李四"}]`,
		"Link":   `{"link":"https://v.example/1","text":"视频页"}`,
	}
	for name, w := range want {
		b, _ := json.Marshal(got[name])
		if string(b) != w {
			t.Errorf("%s = %s, want %s", name, b, w)
		}
	}
	if _, ok := got["Empty"]; ok {
		t.Error("empty cell returned; Feishu leaves it out")
	}
	// get without text_field_as_array: text as a plain string.
	a = do(t, s, "GET", "/open-apis/bitable/v1/apps/appEmu/tables/tblV/records/recV", tok, nil)
	f := a.body["data"].(map[string]any)["record"].(map[string]any)["fields"].(map[string]any)
	if f["Text"] != "plain" || f["Rich"] != "see @张三site" {
		t.Errorf("get text = %v / %v", f["Text"], f["Rich"])
	}
	// Person cells filter by user id.
	a = do(t, s, "POST", "/open-apis/bitable/v1/apps/appEmu/tables/tblV/records/search", tok, map[string]any{"filter": map[string]any{
		"conjunction": "and", "conditions": []any{map[string]any{"field_name": "People", "operator": "contains", "value": []string{"ou_2"}}}}})
	if a.code() != 0 || len(a.body["data"].(map[string]any)["items"].([]any)) != 1 {
		t.Errorf("person filter: %+v", a.body)
	}
}
