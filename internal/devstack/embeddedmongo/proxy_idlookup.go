package embeddedmongo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"io"
	"math"
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
// on scalars or $in, $nin, $ne and $exists over scalars (the shapes guarded writes have: a step
// or task finished once, {_id, status: {$in: open}}), and upserts when the document they would
// insert does not depend on the filter's other fields; anything else goes to FerretDB unchanged.

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
				if g, ok := guardOf(s.docs[j], "q", "u"); ok {
					g.at = &p.seqs[i].docs[j]
					found = append(found, g)
				}
			}
		}
	case "findAndModify", "findandmodify":
		if g, ok := guardOf(p.body, "query", "update"); ok {
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
// upsert statements also carry what their update sets, which decides whether the document an
// upsert inserts depends on the filter's other fields.
type guardedStatement struct {
	at     *bson.Raw
	key    string
	id     bson.RawValue
	rest   []condition
	upsert bool
	sets   map[string]bool // fields the update's $set names (upserts only)
}

// condition is one field's part of a filter: a plain equality (op "") or one of the operators
// the proxy decides, $in, $nin, $ne and $exists, with scalar operands.
type condition struct {
	field string
	op    string
	vals  []bson.RawValue
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
// decides: an _id and at least one other condition, on a statement with no collation (string
// equality under a collation is not byte equality). An upsert qualifies when its update is a
// document of update operators (updateKey names it: "u" in update, "update" in findAndModify).
func guardOf(st bson.Raw, key, updateKey string) (guardedStatement, bool) {
	if _, err := st.LookupErr("collation"); err == nil {
		return guardedStatement{}, false
	}
	q, ok := st.Lookup(key).DocumentOK()
	if !ok {
		return guardedStatement{}, false
	}
	id, rest, ok := guardShape(q)
	if !ok || len(rest) == 0 {
		return guardedStatement{}, false
	}
	g := guardedStatement{key: key, id: id, rest: rest}
	if up, ok := st.Lookup("upsert").BooleanOK(); ok && up {
		if g.sets, ok = setFields(st.Lookup(updateKey)); !ok {
			return guardedStatement{}, false
		}
		g.upsert = true
	}
	return g, true
}

// setFields names the top-level fields an operator update's $set assigns; ok is false for a
// replacement document or a pipeline, whose inserted document the proxy does not model.
func setFields(u bson.RawValue) (map[string]bool, bool) {
	doc, ok := u.DocumentOK()
	if !ok {
		return nil, false
	}
	ops, err := doc.Elements()
	if err != nil || len(ops) == 0 {
		return nil, false
	}
	sets := map[string]bool{}
	for _, op := range ops {
		if !strings.HasPrefix(op.Key(), "$") {
			return nil, false
		}
		if op.Key() != "$set" {
			continue
		}
		fields, err := op.Value().Document().Elements()
		if err != nil {
			return nil, false
		}
		for _, f := range fields {
			sets[f.Key()] = true
		}
	}
	return sets, true
}

// decide returns the statement with its filter replaced by a lone _id, given its document as
// looked up (nil when there is none); ok is false when the proxy leaves the statement to FerretDB.
//
// An update, delete or findAndModify gets the document's own _id when the filter matches it and
// noMatchID when not. An upsert is MongoDB's "update, or insert when nothing matches": when the
// document matches it gets its _id (the update runs); when there is no document it also gets its
// _id, which inserts the same document MongoDB would — built from the filter's equality clauses
// (the _id, and equalities the update's $set overwrites anyway) and the update — so the proxy
// decides it only when no other clause would shape that document. An upsert whose document
// exists but does not match fails in MongoDB with a duplicate _id; that path is rare (a retried
// write) and left to FerretDB.
func (g guardedStatement) decide(doc bson.Raw) (bson.Raw, bool) {
	match := false
	if doc != nil {
		var decided bool
		if match, decided = matchesAll(doc, g.rest); !decided {
			return nil, false
		}
	}
	newID := g.id
	switch {
	case g.upsert && doc != nil && !match:
		return nil, false
	case g.upsert && doc == nil:
		if !g.insertsFromIDAlone() {
			return nil, false
		}
	case !match:
		newID = bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(noMatchID)}
	}
	return replaceField(*g.at, g.key, bson.D{{Key: "_id", Value: newID}})
}

// insertsFromIDAlone reports whether the document an upsert inserts owes nothing to the filter
// but its _id: MongoDB copies the filter's equality clauses into it (an operator like $in with
// one value may count as one), so each plain equality must be a field the update's $set assigns.
func (g guardedStatement) insertsFromIDAlone() bool {
	for _, c := range g.rest {
		switch {
		case c.op == "" && !g.sets[c.field]:
			return false
		case c.op == "$in" && len(c.vals) < 2:
			return false
		}
	}
	return true
}

// guardShape splits a filter into its _id and the conditions on other fields when _id is a plain
// scalar equality and every other field is a condition the proxy decides.
func guardShape(q bson.Raw) (bson.RawValue, []condition, bool) {
	elems, err := q.Elements()
	if err != nil {
		return bson.RawValue{}, nil, false
	}
	var id bson.RawValue
	var rest []condition
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		if strings.HasPrefix(k, "$") || strings.Contains(k, ".") {
			return bson.RawValue{}, nil, false
		}
		if k == "_id" {
			if !decidable(v.Type) {
				return bson.RawValue{}, nil, false
			}
			id = v
			continue
		}
		c, ok := conditionOf(k, v)
		if !ok {
			return bson.RawValue{}, nil, false
		}
		rest = append(rest, c)
	}
	return id, rest, id.Type != 0 && id.Type != bson.TypeNull
}

// conditionOf reads one field's filter value: a scalar is an equality; a document with a single
// operator among $in, $nin (arrays of scalars), $ne (a scalar), $exists (a boolean) and $gt,
// $gte, $lt, $lte (a number, date, string or ObjectId: a lease still live at an instant) is that
// operator; anything else (regular expressions, several operators) is not decided.
func conditionOf(field string, v bson.RawValue) (condition, bool) {
	if decidable(v.Type) {
		return condition{field: field, vals: []bson.RawValue{v}}, true
	}
	d, ok := v.DocumentOK()
	if !ok {
		return condition{}, false
	}
	ops, err := d.Elements()
	if err != nil || len(ops) != 1 {
		return condition{}, false
	}
	op, arg := ops[0].Key(), ops[0].Value()
	switch op {
	case "$ne":
		if !decidable(arg.Type) {
			return condition{}, false
		}
		return condition{field: field, op: op, vals: []bson.RawValue{arg}}, true
	case "$exists":
		if arg.Type != bson.TypeBoolean {
			return condition{}, false
		}
		return condition{field: field, op: op, vals: []bson.RawValue{arg}}, true
	case "$gt", "$gte", "$lt", "$lte":
		if _, ok := bracket(arg.Type); !ok {
			return condition{}, false
		}
		if isNaN(arg) {
			return condition{}, false
		}
		return condition{field: field, op: op, vals: []bson.RawValue{arg}}, true
	case "$in", "$nin":
		arr, ok := arg.ArrayOK()
		if !ok {
			return condition{}, false
		}
		vals, err := arr.Values()
		if err != nil {
			return condition{}, false
		}
		for _, x := range vals {
			if !decidable(x.Type) {
				return condition{}, false
			}
		}
		return condition{field: field, op: op, vals: vals}, true
	}
	return condition{}, false
}

func decidable(t bson.Type) bool {
	switch t {
	case bson.TypeString, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeBoolean,
		bson.TypeObjectID, bson.TypeDateTime, bson.TypeNull:
		return true
	}
	return false
}

// matchesAll decides whether doc satisfies every condition, as MongoDB's query would: null
// matches a missing field or null, numbers compare by value, other scalars by type and bytes;
// $in matches when any of its values would, $ne and $nin when the equality would not, $exists
// when the field is present (null included) or absent as asked. decided is false when a field
// holds an array or a document, where MongoDB's rules (an array matches when an element does)
// are left to FerretDB.
func matchesAll(doc bson.Raw, rest []condition) (match, decided bool) {
	match = true
	for _, c := range rest {
		have := doc.Lookup(c.field)
		if have.Type == bson.TypeArray || have.Type == bson.TypeEmbeddedDocument {
			return false, false
		}
		if rangeOps[c.op] && isNaN(have) {
			return false, false // NaN's place in an order is MongoDB's own rule: left to FerretDB
		}
		match = match && c.matches(have)
	}
	return match, true
}

func (c condition) matches(have bson.RawValue) bool {
	switch c.op {
	case "$exists":
		return (have.Type != 0) == c.vals[0].Boolean()
	case "$ne", "$nin":
		return !anyEqual(have, c.vals)
	case "$gt", "$gte", "$lt", "$lte":
		return compares(c.op, have, c.vals[0])
	}
	return anyEqual(have, c.vals) // equality and $in
}

func anyEqual(have bson.RawValue, vals []bson.RawValue) bool {
	for _, v := range vals {
		if equalScalar(have, v) {
			return true
		}
	}
	return false
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

// bracket is the comparison bracket of a type the proxy orders: MongoDB's $gt, $gte, $lt and $lte
// compare a field only with a value of the same bracket (numbers of any type together) and match
// nothing else — a missing field, null or another type — ("Comparison/Sort Order",
// https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/, and the operators'
// pages: "$gt selects those documents where the value of the specified field is greater than",
// with type bracketing). Strings compare by their bytes, as under the simple collation.
func bracket(t bson.Type) (string, bool) {
	switch t {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		return "number", true
	case bson.TypeString:
		return "string", true
	case bson.TypeDateTime:
		return "date", true
	case bson.TypeObjectID:
		return "objectId", true
	}
	return "", false
}

// compares decides have <op> want for a range operator under MongoDB's type bracketing.
func compares(op string, have, want bson.RawValue) bool {
	hb, ok := bracket(have.Type)
	if wb, _ := bracket(want.Type); !ok || hb != wb {
		return false
	}
	var order int
	switch hb {
	case "number":
		h, _ := number(have)
		w, _ := number(want)
		order = cmp.Compare(h, w)
	case "date":
		order = cmp.Compare(have.DateTime(), want.DateTime())
	case "string":
		order = strings.Compare(have.StringValue(), want.StringValue())
	case "objectId":
		h, w := have.ObjectID(), want.ObjectID()
		order = bytes.Compare(h[:], w[:])
	}
	switch op {
	case "$gt":
		return order > 0
	case "$gte":
		return order >= 0
	case "$lt":
		return order < 0
	}
	return order <= 0 // $lte
}

var rangeOps = map[string]bool{"$gt": true, "$gte": true, "$lt": true, "$lte": true}

func isNaN(v bson.RawValue) bool {
	f, ok := v.DoubleOK()
	return ok && math.IsNaN(f)
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
