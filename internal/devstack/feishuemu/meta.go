package feishuemu

import (
	"net/http"
	"strconv"
)

func (s *Server) handleTables(w http.ResponseWriter, r *http.Request) {
	size, aerr := pageSize(r, 20, 100)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	a := s.store.apps[r.PathValue("app")]
	if a == nil {
		writeErr(w, badReq(1254040, "BaseTokenNotFound"))
		return
	}
	offset, aerr := decodeCursor(r.URL.Query().Get("page_token"), a.token, "tables")
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	from, to, data := page(len(a.tables), offset, size, a.token, "tables")
	items := []map[string]any{}
	for _, t := range a.tables[from:to] {
		items = append(items, map[string]any{"table_id": t.id, "name": t.name, "revision": 1})
	}
	data["items"] = items
	writeOK(w, data)
}

func (s *Server) handleFields(w http.ResponseWriter, r *http.Request) {
	size, aerr := pageSize(r, 20, 100)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withRead(w, r, func(t *table) (any, *apiErr) {
		offset, aerr := decodeCursor(r.URL.Query().Get("page_token"), t.id, "fields")
		if aerr != nil {
			return nil, aerr
		}
		from, to, data := page(len(t.fields), offset, size, t.id, "fields")
		items := []map[string]any{}
		for i, f := range t.fields[from:to] {
			it := map[string]any{"field_id": f.id, "field_name": f.name, "type": f.typ, "is_primary": from+i == 0, "is_hidden": false}
			if f.typ == TypeSingleSelect || f.typ == TypeMultiSelect {
				opts := []map[string]any{}
				for j, o := range f.options {
					opts = append(opts, map[string]any{"name": o, "id": "opt" + strconv.Itoa(j), "color": j % 10})
				}
				it["property"] = map[string]any{"options": opts}
			}
			items = append(items, it)
		}
		data["items"] = items
		return data, nil
	})
}

func (s *Server) handleWikiNode(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		writeErr(w, &apiErr{status: http.StatusBadRequest, code: 131002, msg: "param err: token is required"})
		return
	}
	s.store.mu.Lock()
	n, ok := s.store.wiki[tok]
	s.store.mu.Unlock()
	if !ok {
		writeErr(w, &apiErr{status: http.StatusBadRequest, code: 131005, msg: "not found"})
		return
	}
	ts := strconv.FormatInt(s.opts.Now().Unix(), 10)
	writeOK(w, map[string]any{"node": map[string]any{
		"space_id": "7000000000000000001", "node_token": n.NodeToken, "obj_token": n.ObjToken,
		"obj_type": n.ObjType, "parent_node_token": "", "node_type": "origin", "origin_node_token": n.NodeToken,
		"origin_space_id": "7000000000000000001", "has_child": false, "title": n.Title,
		"obj_create_time": ts, "obj_edit_time": ts, "node_create_time": ts,
	}})
}

// Records returns a snapshot of a table's rows in the write format (for test assertions).
func (s *Server) Records(appToken, tableID string) []RecordSpec {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	a := s.store.apps[appToken]
	if a == nil || a.byID[tableID] == nil {
		return nil
	}
	t := a.byID[tableID]
	out := make([]RecordSpec, 0, len(t.records))
	for _, rec := range t.records {
		f := map[string]any{}
		for k, v := range rec.fields {
			if !isEmpty(v) {
				f[k] = v
			}
		}
		out = append(out, RecordSpec{ID: rec.id, Fields: f})
	}
	return out
}
