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

// readFields decodes a single-record create's or update's body, {fields}.
func readFields(r *http.Request) (map[string]any, *apiErr) {
	var req struct {
		Fields map[string]any `json:"fields"`
	}
	aerr := decodeBody(r, &req)
	return req.Fields, aerr
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	fields, aerr := readFields(r)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		rec, aerr := s.insert(t, fields)
		if aerr != nil {
			return nil, aerr
		}
		return map[string]any{"record": rec}, nil
	})
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	fields, aerr := readFields(r)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		id := r.PathValue("record")
		if aerr := s.patch(t, id, fields); aerr != nil {
			return nil, aerr
		}
		return map[string]any{"record": echo(id, fields)}, nil
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

// batchRecord is one record of a batch create's or update's body.
type batchRecord struct {
	RecordID string         `json:"record_id"`
	Fields   map[string]any `json:"fields"`
}

// writeBatch is a batch write, all or nothing as Bitable's: check vets every record before
// apply writes any, and the answer lists what apply returns for each.
func (s *Server) writeBatch(w http.ResponseWriter, r *http.Request,
	check func(*table, batchRecord) *apiErr, apply func(*table, batchRecord) map[string]any) {
	records, aerr := s.readBatch(r)
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	s.withWrite(w, r, func(t *table) (any, *apiErr) {
		for _, rr := range records {
			if aerr := check(t, rr); aerr != nil {
				return nil, aerr
			}
		}
		out := make([]map[string]any, 0, len(records))
		for _, rr := range records {
			out = append(out, apply(t, rr))
		}
		return map[string]any{"records": out}, nil
	})
}

// readBatch decodes a batch write's body and refuses an empty or oversized batch, as Bitable does.
func (s *Server) readBatch(r *http.Request) ([]batchRecord, *apiErr) {
	var req struct {
		Records []batchRecord `json:"records"`
	}
	if aerr := decodeBody(r, &req); aerr != nil {
		return nil, aerr
	}
	if len(req.Records) == 0 {
		return nil, badReq(1254001, "WrongRequestBody: records is empty")
	}
	if len(req.Records) > s.opts.BatchLimit {
		return nil, badReq(1254104, "RecordAddOnceExceedLimit: limited to "+itoa(s.opts.BatchLimit))
	}
	return req.Records, nil
}

func (s *Server) handleBatchCreate(w http.ResponseWriter, r *http.Request) {
	s.writeBatch(w, r, func(t *table, rr batchRecord) *apiErr {
		_, aerr := t.coerce(rr.Fields)
		return aerr
	}, func(t *table, rr batchRecord) map[string]any {
		rec, _ := s.insert(t, rr.Fields)
		return rec
	})
}

func (s *Server) handleBatchUpdate(w http.ResponseWriter, r *http.Request) {
	s.writeBatch(w, r, func(t *table, rr batchRecord) *apiErr {
		if t.byID[rr.RecordID] == nil {
			return badReq(1254043, "RecordIdNotFound: "+rr.RecordID)
		}
		_, aerr := t.coerce(rr.Fields)
		return aerr
	}, func(t *table, rr batchRecord) map[string]any {
		_ = s.patch(t, rr.RecordID, rr.Fields)
		return echo(rr.RecordID, rr.Fields)
	})
}
