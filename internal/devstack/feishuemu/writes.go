package feishuemu

import (
	"io"
	"maps"
	"net/http"
)

func readAll(r *http.Request) ([]byte, error) { return io.ReadAll(io.LimitReader(r.Body, 10<<20)) }

// beginWrite enforces one write at a time per base when WriteConflicts is on.
func (s *Server) beginWrite(a *app) (func(), *apiErr) {
	if !s.opts.WriteConflicts {
		return func() {}, nil
	}
	if !a.writeMu.TryLock() {
		return nil, badReq(1254291, "Write conflict")
	}
	return a.writeMu.Unlock, nil
}

// withWrite looks the table up and runs fn under the base's write guard and the store lock.
// withRead runs fn on the request's table under the store lock and writes its answer, as
// withWrite does for writes.
func (s *Server) withRead(w http.ResponseWriter, r *http.Request, fn func(t *table) (any, *apiErr)) {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	_, t, aerr := s.lookup(r)
	if aerr == nil {
		var data any
		if data, aerr = fn(t); aerr == nil {
			writeOK(w, data)
			return
		}
	}
	writeErr(w, aerr)
}

func (s *Server) withWrite(w http.ResponseWriter, r *http.Request, fn func(t *table) (any, *apiErr)) {
	s.store.mu.Lock()
	a, t, aerr := s.lookup(r)
	s.store.mu.Unlock()
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	done, aerr := s.beginWrite(a)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	defer done()
	s.store.mu.Lock()
	data, aerr := fn(t)
	s.store.mu.Unlock()
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	writeOK(w, data)
}

// echo is the write answer: fields in the input format plus the record id (and the legacy id).
func echo(id string, fields map[string]any) map[string]any {
	return map[string]any{"record_id": id, "id": id, "fields": fields}
}

func (s *Server) insert(t *table, in map[string]any) (map[string]any, *apiErr) {
	fields, aerr := t.coerce(in)
	if aerr != nil {
		return nil, aerr
	}
	now := s.opts.Now().UnixMilli()
	rec := &record{id: newID("rec"), fields: fields, created: now, modified: now}
	t.records = append(t.records, rec)
	t.byID[rec.id] = rec
	s.observe(t, rec.id, in)
	return echo(rec.id, in), nil
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fields map[string]any `json:"fields"`
	}
	if aerr := decodeBody(r, &req); aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		rec, aerr := s.insert(t, req.Fields)
		if aerr != nil {
			return nil, aerr
		}
		return map[string]any{"record": rec}, nil
	})
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fields map[string]any `json:"fields"`
	}
	if aerr := decodeBody(r, &req); aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		id := r.PathValue("record")
		if aerr := s.patch(t, id, req.Fields); aerr != nil {
			return nil, aerr
		}
		return map[string]any{"record": echo(id, req.Fields)}, nil
	})
}

func (s *Server) patch(t *table, id string, in map[string]any) *apiErr {
	rec := t.byID[id]
	if rec == nil {
		return badReq(1254043, "RecordIdNotFound: "+id)
	}
	fields, aerr := t.coerce(in)
	if aerr != nil {
		return aerr
	}
	maps.Copy(rec.fields, fields)
	rec.modified = s.opts.Now().UnixMilli()
	s.observe(t, id, in)
	return nil
}

// observe reports an applied write to Options.OnWrite (called under the store lock, so the
// hook sees writes in the order they were applied).
func (s *Server) observe(t *table, id string, in map[string]any) {
	if s.opts.OnWrite != nil {
		s.opts.OnWrite(t.id, id, maps.Clone(in))
	}
}

type batchReq struct {
	Records []struct {
		RecordID string         `json:"record_id"`
		Fields   map[string]any `json:"fields"`
	} `json:"records"`
}

// readBatch decodes a batch create's or update's body and refuses an empty or oversized batch,
// as Bitable does, before the table is touched.
func (s *Server) readBatch(r *http.Request) (batchReq, *apiErr) {
	var req batchReq
	if aerr := decodeBody(r, &req); aerr != nil {
		return req, aerr
	}
	if len(req.Records) == 0 {
		return req, badReq(1254001, "WrongRequestBody: records is empty")
	}
	if len(req.Records) > s.opts.BatchLimit {
		return req, badReq(1254104, "RecordAddOnceExceedLimit: limited to "+itoa(s.opts.BatchLimit))
	}
	return req, nil
}

// handleBatchCreate is all-or-nothing: every row is validated before any is inserted.
func (s *Server) handleBatchCreate(w http.ResponseWriter, r *http.Request) {
	req, aerr := s.readBatch(r)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		for _, rr := range req.Records {
			if _, aerr := t.coerce(rr.Fields); aerr != nil {
				return nil, aerr
			}
		}
		out := make([]map[string]any, 0, len(req.Records))
		for _, rr := range req.Records {
			rec, _ := s.insert(t, rr.Fields)
			out = append(out, rec)
		}
		return map[string]any{"records": out}, nil
	})
}

func (s *Server) handleBatchUpdate(w http.ResponseWriter, r *http.Request) {
	req, aerr := s.readBatch(r)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		for _, rr := range req.Records {
			if t.byID[rr.RecordID] == nil {
				return nil, badReq(1254043, "RecordIdNotFound: "+rr.RecordID)
			}
			if _, aerr := t.coerce(rr.Fields); aerr != nil {
				return nil, aerr
			}
		}
		out := make([]map[string]any, 0, len(req.Records))
		for _, rr := range req.Records {
			_ = s.patch(t, rr.RecordID, rr.Fields)
			out = append(out, echo(rr.RecordID, rr.Fields))
		}
		return map[string]any{"records": out}, nil
	})
}
