package devstack

import (
	"encoding/binary"
	"io"
	"strings"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FerretDB v1 pushes a write's filter down to SQLite only when the filter is a lone _id; any
// other filter — the guarded writes MongoDB's contract is used through, {_id, rev} or
// {_id, lease_id} — scans and decodes the whole collection, so n guarded writes cost O(n²)
// where MongoDB answers each from the _id index. Under the write lock nothing else changes a
// document between two commands, so the proxy can do what MongoDB's index does: look the
// document up by its lone _id, decide the rest of the filter itself, and send FerretDB the
// statement with a lone-_id filter — the document's own _id when it matches, an _id no document
// has when it does not. The proxy decides only filters whose other fields are plain equalities
// on scalars (the shape guarded writes have); anything else goes to FerretDB unchanged.

// noMatchID is an _id no taskloom document has: a statement whose guard failed is sent with it,
// so FerretDB answers "matched nothing" from the index.
const noMatchID = "\x00taskloom-devstack-guard-failed"

var lookupRequestID atomic.Int32

// pushDownIDs rewrites the guarded statements of an update, delete or findAndModify request.
// It returns req unchanged when there is nothing to rewrite or the request is not of the
// shape drivers send; lookup errors also leave req unchanged (FerretDB then answers it slowly
// but correctly).
func pushDownIDs(req []byte, cmd command, backend io.ReadWriter) []byte {
	p, err := parseOpMsg(req)
	if err != nil || p.flags&^flagMoreToCome != 0 {
		return req
	}
	look := func(id bson.RawValue) (bson.Raw, bool) { return findByID(backend, cmd, id) }
	changed := false
	switch cmd.name {
	case "update", "delete":
		seqID := map[string]string{"update": "updates", "delete": "deletes"}[cmd.name]
		if repeatsID(p.seqs, seqID) {
			// Deciding a document's guard twice from one lookup would let every statement on it
			// match; FerretDB runs the statements in order, as MongoDB does.
			return req
		}
		for i, s := range p.seqs {
			if s.id != seqID {
				continue
			}
			docs := make([]bson.Raw, len(s.docs))
			for j, st := range s.docs {
				docs[j] = st
				if nst, ok := rewriteStatement(st, "q", look); ok {
					docs[j], changed = nst, true
				}
			}
			p.seqs[i].docs = docs
		}
	case "findAndModify", "findandmodify":
		if nb, ok := rewriteStatement(p.body, "query", look); ok {
			p.body, changed = nb, true
		}
	}
	if !changed {
		return req
	}
	return p.encode(int32(binary.LittleEndian.Uint32(req[8:12])))
}

// repeatsID reports whether two statements of the command's seqID sequence filter on the same
// _id: the proxy looks each document up once before any statement runs, so it can decide a guard
// only for a document that no earlier statement of the same command changes.
func repeatsID(seqs []docSequence, seqID string) bool {
	seen := map[string]bool{}
	for _, s := range seqs {
		if s.id != seqID {
			continue
		}
		for _, st := range s.docs {
			q, ok := st.Lookup("q").DocumentOK()
			if !ok {
				continue
			}
			id, err := q.LookupErr("_id")
			if err != nil {
				continue
			}
			k := string(rune(id.Type)) + string(id.Value)
			if seen[k] {
				return true
			}
			seen[k] = true
		}
	}
	return false
}

// rewriteStatement replaces the filter under key with a lone _id when the proxy can decide it.
func rewriteStatement(st bson.Raw, key string, look func(bson.RawValue) (bson.Raw, bool)) (bson.Raw, bool) {
	if up, ok := st.Lookup("upsert").BooleanOK(); ok && up {
		return nil, false // an upsert's filter also shapes the inserted document
	}
	if _, err := st.LookupErr("collation"); err == nil {
		return nil, false // string equality under a collation is not byte equality
	}
	q, ok := st.Lookup(key).DocumentOK()
	if !ok {
		return nil, false
	}
	id, rest, ok := guardShape(q)
	if !ok || len(rest) == 0 {
		return nil, false
	}
	doc, ok := look(id)
	if !ok {
		return nil, false
	}
	match := false
	if doc != nil {
		var decided bool
		if match, decided = matchesAll(doc, rest); !decided {
			return nil, false
		}
	}
	newID := id
	if !match {
		newID = bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(noMatchID)}
	}
	return replaceField(st, key, bson.D{{Key: "_id", Value: newID}})
}

// guardShape splits a filter into its _id and the other fields when every field is a plain
// scalar equality and _id is one of them.
func guardShape(q bson.Raw) (bson.RawValue, []bson.RawElement, bool) {
	elems, err := q.Elements()
	if err != nil {
		return bson.RawValue{}, nil, false
	}
	var id bson.RawValue
	var rest []bson.RawElement
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		if strings.HasPrefix(k, "$") || strings.Contains(k, ".") || !decidable(v.Type) {
			return bson.RawValue{}, nil, false
		}
		if k == "_id" {
			id = v
			continue
		}
		rest = append(rest, e)
	}
	return id, rest, id.Type != 0 && id.Type != bson.TypeNull
}

func decidable(t bson.Type) bool {
	switch t {
	case bson.TypeString, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeBoolean,
		bson.TypeObjectID, bson.TypeDateTime, bson.TypeNull:
		return true
	}
	return false
}

// matchesAll decides whether doc satisfies every equality, as MongoDB's query would: null
// matches a missing field or null, numbers compare by value, other scalars by type and bytes.
// decided is false when a field holds an array or a document, where MongoDB's rules (an array
// matches when an element does) are left to FerretDB.
func matchesAll(doc bson.Raw, rest []bson.RawElement) (match, decided bool) {
	match = true
	for _, e := range rest {
		have := doc.Lookup(e.Key())
		if have.Type == bson.TypeArray || have.Type == bson.TypeEmbeddedDocument {
			return false, false
		}
		match = match && equalScalar(have, e.Value())
	}
	return match, true
}

func equalScalar(have, want bson.RawValue) bool {
	if want.Type == bson.TypeNull {
		return have.Type == 0 || have.Type == bson.TypeNull || have.Type == bson.TypeUndefined
	}
	if hn, ok := number(have); ok {
		wn, ok := number(want)
		return ok && hn == wn
	}
	return have.Type == want.Type && string(have.Value) == string(want.Value)
}

func number(v bson.RawValue) (float64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return float64(v.Int32()), true
	case bson.TypeInt64:
		return float64(v.Int64()), true
	case bson.TypeDouble:
		return v.Double(), true
	}
	return 0, false
}

// replaceField returns st with key's value replaced by val.
func replaceField(st bson.Raw, key string, val bson.D) (bson.Raw, bool) {
	var d bson.D
	if err := bson.Unmarshal(st, &d); err != nil {
		return nil, false
	}
	for i := range d {
		if d[i].Key == key {
			d[i].Value = val
		}
	}
	b, err := bson.Marshal(d)
	return b, err == nil
}

func bsoncoreString(s string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(s)+1))
	b = append(b, s...)
	return append(b, 0)
}

// findByID reads one document by its lone _id over the client's own backend connection: nil
// when there is none; ok false when the lookup failed.
func findByID(backend io.ReadWriter, cmd command, id bson.RawValue) (doc bson.Raw, ok bool) {
	body, err := bson.Marshal(bson.D{{Key: "find", Value: cmd.collection},
		{Key: "filter", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: int32(1)},
		{Key: "singleBatch", Value: true}, {Key: "$db", Value: cmd.db}})
	if err != nil || cmd.collection == "" || cmd.db == "" {
		return nil, false
	}
	req := opMsgParts{requestID: lookupRequestID.Add(1) | 1<<30, body: body}
	if _, err := backend.Write(req.encode(0)); err != nil {
		return nil, false
	}
	resp, err := readMessage(backend)
	if err != nil {
		return nil, false
	}
	rp, err := parseOpMsg(resp)
	if err != nil {
		return nil, false
	}
	if okv, _ := rp.body.Lookup("ok").AsFloat64OK(); okv != 1 {
		return nil, false
	}
	batch, ok := rp.body.Lookup("cursor", "firstBatch").ArrayOK()
	if !ok {
		return nil, false
	}
	vals, err := batch.Values()
	if err != nil {
		return nil, false
	}
	if len(vals) == 0 {
		return nil, true
	}
	d, ok := vals[0].DocumentOK()
	return d, ok
}
