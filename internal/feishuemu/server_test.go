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
	fx, err := LoadFixtureFile("../../testdata/feishu/taskloom_base.json")
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
