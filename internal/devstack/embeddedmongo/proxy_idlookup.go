package embeddedmongo

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
	var found []guardedStatement
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
			for j := range s.docs {
				if g, ok := guardOf(s.docs[j], "q"); ok {
					g.at = &p.seqs[i].docs[j]
					found = append(found, g)
				}
			}
		}
	case "findAndModify", "findandmodify":
		if g, ok := guardOf(p.body, "query"); ok {
			g.at = &p.body
			found = append(found, g)
		}
	}
	if len(found) == 0 {
		return req
	}
	ids := make([]bson.RawValue, len(found))
	for i, g := range found {
		ids[i] = g.id
	}
	docs, ok := findByIDs(backend, cmd, ids)
	if !ok {
		return req
	}
	changed := false
	for i, g := range found {
		if nst, ok := g.decide(docs[i]); ok {
			*g.at, changed = nst, true
		}
	}
	if !changed {
		return req
	}
	return p.encode(int32(binary.LittleEndian.Uint32(req[8:12])))
}

// guardedStatement is a statement whose filter the proxy can decide from its document: at is
// where the statement sits in the parsed request, key names its filter, id and rest split it.
type guardedStatement struct {
	at   *bson.Raw
	key  string
	id   bson.RawValue
	rest []bson.RawElement
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

// guardOf returns st as a guardedStatement when its filter under key has the shape the proxy
// decides: an _id and at least one other plain equality, on a statement that is no upsert and
// has no collation.
func guardOf(st bson.Raw, key string) (guardedStatement, bool) {
	if up, ok := st.Lookup("upsert").BooleanOK(); ok && up {
		return guardedStatement{}, false // an upsert's filter also shapes the inserted document
	}
	if _, err := st.LookupErr("collation"); err == nil {
		return guardedStatement{}, false // string equality under a collation is not byte equality
	}
	q, ok := st.Lookup(key).DocumentOK()
	if !ok {
		return guardedStatement{}, false
	}
	id, rest, ok := guardShape(q)
	if !ok || len(rest) == 0 {
		return guardedStatement{}, false
	}
	return guardedStatement{key: key, id: id, rest: rest}, true
}

// decide returns the statement with its filter replaced by a lone _id, given its document as
// looked up (nil when there is none): the document's own _id when the filter matches it,
// noMatchID when not. ok is false when the proxy cannot decide the filter.
func (g guardedStatement) decide(doc bson.Raw) (bson.Raw, bool) {
	match := false
	if doc != nil {
		var decided bool
		if match, decided = matchesAll(doc, g.rest); !decided {
			return nil, false
		}
	}
	newID := g.id
	if !match {
		newID = bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(noMatchID)}
	}
	return replaceField(*g.at, g.key, bson.D{{Key: "_id", Value: newID}})
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

// findByIDs reads the documents with the given _ids, each by its lone _id (the one filter
// FerretDB answers from an index), over the client's own backend connection. It sends every
// find before it reads the first reply, so n lookups cost one round trip rather than n; the
// writes run beside the reads so that neither side can fill its socket buffer and wait for the
// other. docs[i] is nil when ids[i] names no document; ok is false when any lookup failed.
func findByIDs(backend io.ReadWriter, cmd command, ids []bson.RawValue) (docs []bson.Raw, ok bool) {
	if cmd.collection == "" || cmd.db == "" {
		return nil, false
	}
	reqs := make([]byte, 0, 128*len(ids))
	first := lookupRequestID.Add(int32(len(ids))) - int32(len(ids)) + 1
	for i, id := range ids {
		body, err := bson.Marshal(bson.D{{Key: "find", Value: cmd.collection},
			{Key: "filter", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: int32(1)},
			{Key: "singleBatch", Value: true}, {Key: "$db", Value: cmd.db}})
		if err != nil {
			return nil, false
		}
		reqs = append(reqs, opMsgParts{requestID: lookupID(first + int32(i)), body: body}.encode(0)...)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := backend.Write(reqs)
		wrote <- err
	}()
	docs, ok = make([]bson.Raw, len(ids)), true
	for i := range ids {
		resp, err := readMessage(backend)
		if err != nil {
			<-wrote
			return nil, false
		}
		var found bool
		docs[i], found = lookupReply(resp, lookupID(first+int32(i)))
		ok = ok && found
	}
	if err := <-wrote; err != nil {
		return nil, false
	}
	return docs, ok
}

// lookupID keeps the proxy's own request IDs apart from the driver's.
func lookupID(n int32) int32 { return n&(1<<30-1) | 1<<30 }

// lookupReply takes the document out of the reply to the find with request ID id: nil when
// there is none; ok false when the find failed.
func lookupReply(resp []byte, id int32) (doc bson.Raw, ok bool) {
	if int32(binary.LittleEndian.Uint32(resp[8:12])) != id {
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
	return vals[0].DocumentOK()
}
