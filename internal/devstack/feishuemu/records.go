package feishuemu

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// lookup finds the table named by the path; the caller holds s.store.mu.
func (s *Server) lookup(r *http.Request) (*app, *table, *apiErr) {
	a := s.store.apps[r.PathValue("app")]
	if a == nil {
		return nil, nil, badReq(1254040, "BaseTokenNotFound")
	}
	t := a.byID[r.PathValue("table")]
	if t == nil {
		return nil, nil, badReq(1254041, "TableIdNotFound")
	}
	return a, t, nil
}

func decodeBody(r *http.Request, v any) *apiErr {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return badReq(1254000, "WrongRequestJson: "+err.Error())
	}
	return nil
}

type searchReq struct {
	ViewID     string   `json:"view_id"`
	FieldNames []string `json:"field_names"`
	Sort       []struct {
		FieldName string `json:"field_name"`
		Desc      bool   `json:"desc"`
	} `json:"sort"`
	Filter          *wireFilter `json:"filter"`
	AutomaticFields bool        `json:"automatic_fields"`
}

// maxFilterChars is the documented limit on a search filter: "filter" longer than 2,000
// characters of JSON is answered 1254107 FilterLengthExceedLimit with HTTP 200 (record search
// error table, open.feishu.cn bitable-v1 app-table-record/search).
const maxFilterChars = 2000

// filterLength measures the filter as sent, in characters, whitespace removed.
func filterLength(raw []byte) int {
	var probe struct {
		Filter json.RawMessage `json:"filter"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Filter) == 0 {
		return 0
	}
	var b bytes.Buffer
	if json.Compact(&b, probe.Filter) != nil {
		return len(probe.Filter)
	}
	return utf8.RuneCount(b.Bytes())
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	raw, _ := readAll(r)
	var req searchReq
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			writeErr(w, badReq(1254000, "WrongRequestJson: "+err.Error()))
			return
		}
	}
	if n := filterLength(raw); n > maxFilterChars {
		writeErr(w, badReq(1254107, "FilterLengthExceedLimit, limited to 2,000 characters"))
		return
	}
	size, aerr := pageSize(r, 20, 500)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withRead(w, r, func(t *table) (any, *apiErr) {
		for _, n := range req.FieldNames {
			if t.byName[n] == nil {
				return nil, badReq(1254045, "FieldNameNotFound: "+n)
			}
		}
		pred, aerr := compileFilter(t, req.Filter, s.opts.Location, s.opts.Now())
		if aerr != nil {
			return nil, aerr
		}
		var hits []*record
		for _, rec := range t.records {
			if pred(rec) {
				hits = append(hits, rec)
			}
		}
		for i := len(req.Sort) - 1; i >= 0; i-- {
			f := t.byName[req.Sort[i].FieldName]
			if f == nil {
				return nil, badReq(1254016, "InvalidSort: "+req.Sort[i].FieldName)
			}
			desc := req.Sort[i].Desc
			slices.SortStableFunc(hits, func(a, b *record) int { return compareCells(a.value(f), b.value(f), desc) })
		}
		query := queryKey(string(raw))
		offset, aerr := decodeCursor(r.URL.Query().Get("page_token"), t.id, query)
		if aerr != nil {
			return nil, aerr
		}
		from, to, data := page(len(hits), offset, size, t.id, query)
		items := make([]map[string]any, 0, to-from)
		for _, rec := range hits[from:to] {
			items = append(items, s.item(t, rec, req.FieldNames, true, req.AutomaticFields))
		}
		data["items"] = items
		return data, nil
	})
}

func (s *Server) item(t *table, rec *record, names []string, segments, automatic bool) map[string]any {
	it := map[string]any{"record_id": rec.id, "id": rec.id, "fields": t.render(rec, names, segments, s.opts.Users)}
	if automatic {
		it["created_time"] = rec.created
		it["last_modified_time"] = rec.modified
	}
	return it
}

// compareCells orders numbers numerically and everything else by text; empty cells sort last
// in either direction (UNVERIFIED on real Feishu; documented emulator choice).
func compareCells(a, b any, desc bool) int {
	ea, eb := isEmpty(a), isEmpty(b)
	switch {
	case ea && eb:
		return 0
	case ea:
		return 1
	case eb:
		return -1
	}
	var c int
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		switch {
		case fa < fb:
			c = -1
		case fa > fb:
			c = 1
		}
	} else {
		c = strings.Compare(cellText(a), cellText(b))
	}
	if desc {
		return -c
	}
	return c
}

// listFilter accepts the formula form CurrentValue.[Field]="value", the only one taskloom
// would send to the deprecated list endpoint.
var listFilter = regexp.MustCompile(`^CurrentValue\.\[([^\]]+)\]\s*=\s*"((?:[^"\\]|\\.)*)"$`)

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, aerr := pageSize(r, 20, 500)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withRead(w, r, func(t *table) (any, *apiErr) {
		var names []string
		if fn := q.Get("field_names"); fn != "" {
			if err := json.Unmarshal([]byte(fn), &names); err != nil {
				return nil, badReq(1254024, "InvalidFieldNames")
			}
		}
		pred := func(*record) bool { return true }
		if ft := strings.TrimSpace(q.Get("filter")); ft != "" {
			m := listFilter.FindStringSubmatch(ft)
			if m == nil || t.byName[m[1]] == nil {
				return nil, invalidFilter("unsupported formula %q", ft)
			}
			f, want := t.byName[m[1]], strings.ReplaceAll(m[2], `\"`, `"`)
			pred = func(rec *record) bool { return cellText(rec.value(f)) == want }
		}
		var hits []*record
		for _, rec := range t.records {
			if pred(rec) {
				hits = append(hits, rec)
			}
		}
		query := queryKey(q.Get("filter"), q.Get("field_names"), q.Get("sort"))
		offset, aerr := decodeCursor(q.Get("page_token"), t.id, query)
		if aerr != nil {
			return nil, aerr
		}
		segments := q.Get("text_field_as_array") == "true"
		automatic := q.Get("automatic_fields") == "true"
		from, to, data := page(len(hits), offset, size, t.id, query)
		items := make([]map[string]any, 0, to-from)
		for _, rec := range hits[from:to] {
			items = append(items, s.item(t, rec, names, segments, automatic))
		}
		data["items"] = items
		return data, nil
	})
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	s.withRead(w, r, func(t *table) (any, *apiErr) {
		rec := t.byID[r.PathValue("record")]
		if rec == nil {
			return nil, badReq(1254043, "RecordIdNotFound")
		}
		q := r.URL.Query()
		return map[string]any{"record": s.item(t, rec, nil, q.Get("text_field_as_array") == "true", q.Get("automatic_fields") == "true")}, nil
	})
}

func (s *Server) handleBatchGet(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RecordIDs       []string `json:"record_ids"`
		AutomaticFields bool     `json:"automatic_fields"`
	}
	if aerr := decodeBody(r, &req); aerr != nil {
		writeErr(w, aerr)
		return
	}
	if len(req.RecordIDs) == 0 || len(req.RecordIDs) > 100 {
		writeErr(w, &apiErr{status: http.StatusBadRequest, code: 1254001, msg: "WrongRequestBody: record_ids must hold 1 to 100 ids"})
		return
	}
	s.withRead(w, r, func(t *table) (any, *apiErr) {
		recs := []map[string]any{}
		absent := []string{}
		for _, id := range req.RecordIDs {
			if rec := t.byID[id]; rec != nil {
				recs = append(recs, s.item(t, rec, nil, true, req.AutomaticFields))
			} else {
				absent = append(absent, id)
			}
		}
		return map[string]any{"records": recs, "absent_record_ids": absent, "forbidden_record_ids": []string{}}, nil
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
