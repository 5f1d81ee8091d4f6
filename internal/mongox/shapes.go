package mongox

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
)

// Index coverage: every query shape the stores issue must be served by an index they declare
// A process-wide recorder, switched on by tests (testenv.Main), collects from the
// command monitor the shape of each query a non-test caller sends and the key pattern of each
// index created; UncoveredShapes then names the shapes no declared index serves.

// Shape is what an index must serve of one query: the collection, its equality fields, its sort
// and its range fields.
type Shape struct {
	Collection string
	Eq         []string // sorted
	Sort       []SortKey
	Range      []string // sorted
}

// SortKey is one field of a sort (Dir 1 or -1).
type SortKey struct {
	Field string
	Dir   int
}

func (s Shape) String() string {
	sorts := make([]string, len(s.Sort))
	for i, k := range s.Sort {
		sorts[i] = fmt.Sprintf("%s:%d", k.Field, k.Dir)
	}
	return fmt.Sprintf("%s eq[%s] sort[%s] range[%s]", s.Collection, strings.Join(s.Eq, ","),
		strings.Join(sorts, ","), strings.Join(s.Range, ","))
}

type shapeRecorder struct {
	mu      sync.Mutex
	on      bool
	shapes  map[string]shapeSeen   // Shape.String() → shape and where it came from
	indexes map[string][][]SortKey // collection → declared key patterns
}

type shapeSeen struct {
	shape  Shape
	caller string
}

var recorder = shapeRecorder{shapes: map[string]shapeSeen{}, indexes: map[string][][]SortKey{}}

// RecordShapes switches the process-wide shape recorder on (tests only: it walks the caller's
// stack for every command).
func RecordShapes() {
	recorder.mu.Lock()
	recorder.on = true
	recorder.mu.Unlock()
}

func (r *shapeRecorder) enabled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.on
}

type scanKey struct{}

// DeliberateScan marks ctx's queries as meant to read a whole collection — a one-time migration
// backfilling a field, a report over a small admin registry — so the index-coverage check does
// not count them. Every other query must be served by a declared index.
func DeliberateScan(ctx context.Context) context.Context {
	return context.WithValue(ctx, scanKey{}, true)
}

// observe is called by Monitor for every command.
func (r *shapeRecorder) observe(ctx context.Context, e *event.CommandStartedEvent) {
	if !r.enabled() || ctx.Value(scanKey{}) != nil {
		return
	}
	coll := collectionOf(e.Command, e.CommandName)
	if e.CommandName == "createIndexes" {
		r.declare(coll, e.Command)
		return
	}
	shapes := shapesOf(e.CommandName, coll, e.Command)
	if len(shapes) == 0 {
		return
	}
	caller, fromStore := storeCaller()
	if !fromStore {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range shapes {
		if _, ok := r.shapes[s.String()]; !ok {
			r.shapes[s.String()] = shapeSeen{shape: s, caller: caller}
		}
	}
}

// storeCaller finds the code that issued the command: the first frame outside the driver and
// this package. Queries from tests' own code (_test.go files, testenv) are not the stores'.
func storeCaller() (string, bool) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		// By file, not function name: the monitor's closure is inlined into its callers.
		driver := strings.Contains(f.File, "go.mongodb.org/mongo-driver") || strings.Contains(f.File, "/internal/mongox/")
		if !driver && f.File != "" {
			test := strings.HasSuffix(f.File, "_test.go") || strings.Contains(f.File, "/internal/testenv/")
			return fmt.Sprintf("%s:%d", f.File, f.Line), !test
		}
		if !more {
			return "", false
		}
	}
}

func (r *shapeRecorder) declare(coll string, cmd bson.Raw) {
	arr, ok := cmd.Lookup("indexes").ArrayOK()
	if !ok {
		return
	}
	vals, _ := arr.Values()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range vals {
		doc, ok := v.DocumentOK()
		if !ok {
			continue
		}
		key, ok := doc.Lookup("key").DocumentOK()
		if !ok {
			continue
		}
		r.indexes[coll] = append(r.indexes[coll], sortKeys(key))
	}
}

// shapesOf returns the query shapes of one command (an $or gives one per branch).
func shapesOf(name, coll string, cmd bson.Raw) []Shape {
	var filters []struct{ filter, sort bson.Raw }
	add := func(f, s bson.Raw) { filters = append(filters, struct{ filter, sort bson.Raw }{f, s}) }
	doc := func(r bson.Raw, key string) bson.Raw { d, _ := r.Lookup(key).DocumentOK(); return d }
	switch name {
	case "find":
		add(doc(cmd, "filter"), doc(cmd, "sort"))
	case "count", "distinct":
		add(doc(cmd, "query"), nil)
	case "findAndModify":
		add(doc(cmd, "query"), doc(cmd, "sort"))
	case "update", "delete":
		list, q := "updates", "q"
		if name == "delete" {
			list = "deletes"
		}
		arr, _ := cmd.Lookup(list).ArrayOK()
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				add(doc(d, q), doc(d, "sort"))
			}
		}
	case "aggregate":
		arr, _ := cmd.Lookup("pipeline").ArrayOK()
		vals, _ := arr.Values()
		var match, srt bson.Raw
		for i, v := range vals { // a leading $match, and a $sort right after it, use indexes
			d, _ := v.DocumentOK()
			if m := doc(d, "$match"); m != nil && i == 0 {
				match = m
			} else if s := doc(d, "$sort"); s != nil && i <= 1 {
				srt = s
			} else {
				break
			}
		}
		add(match, srt)
	default:
		return nil
	}
	var out []Shape
	for _, f := range filters {
		for _, s := range branches(f.filter) {
			s.Collection = coll
			s.Sort = sortKeys(f.sort)
			sort.Strings(s.Eq)
			sort.Strings(s.Range)
			out = append(out, s)
		}
	}
	return out
}

// branches returns the shape of a filter, one per $or branch.
func branches(filter bson.Raw) []Shape {
	base := Shape{}
	var ors [][]Shape
	elems, _ := filter.Elements()
	for _, e := range elems {
		switch k := e.Key(); k {
		case "$and":
			for _, sub := range subFilters(e.Value()) {
				b := branches(sub)
				if len(b) == 1 {
					base = merge(base, b[0])
				} else {
					ors = append(ors, b)
				}
			}
		case "$or":
			var alts []Shape
			for _, sub := range subFilters(e.Value()) {
				alts = append(alts, branches(sub)...)
			}
			ors = append(ors, alts)
		case "$nor", "$expr", "$where", "$comment", "$text":
			// not index-served conditions; the other fields still are
		default:
			if isEquality(e.Value()) {
				base.Eq = append(base.Eq, k)
			} else {
				base.Range = append(base.Range, k)
			}
		}
	}
	out := []Shape{base}
	for _, alts := range ors {
		var next []Shape
		for _, o := range out {
			for _, a := range alts {
				next = append(next, merge(o, a))
			}
		}
		out = next
	}
	return out
}

func subFilters(v bson.RawValue) []bson.Raw {
	arr, _ := v.ArrayOK()
	vals, _ := arr.Values()
	var out []bson.Raw
	for _, x := range vals {
		if d, ok := x.DocumentOK(); ok {
			out = append(out, d)
		}
	}
	return out
}

func merge(a, b Shape) Shape {
	return Shape{Eq: append(slices.Clone(a.Eq), b.Eq...), Range: append(slices.Clone(a.Range), b.Range...)}
}

// isEquality reports a condition an index serves as a point lookup: a value, $eq, $in or
// $elemMatch. Other operators ($gt, $ne, $exists, …) are ranges.
func isEquality(v bson.RawValue) bool {
	d, ok := v.DocumentOK()
	if !ok {
		return true
	}
	elems, _ := d.Elements()
	if len(elems) == 0 || !strings.HasPrefix(elems[0].Key(), "$") {
		return true // an embedded document matched whole
	}
	for _, e := range elems {
		switch e.Key() {
		case "$eq", "$in", "$elemMatch":
		default:
			return false
		}
	}
	return true
}

func sortKeys(d bson.Raw) []SortKey {
	elems, _ := d.Elements()
	out := make([]SortKey, 0, len(elems))
	for _, e := range elems {
		dir := 1
		if n, ok := e.Value().AsInt64OK(); ok && n < 0 {
			dir = -1
		} else if f, ok := e.Value().DoubleOK(); ok && f < 0 {
			dir = -1
		}
		out = append(out, SortKey{Field: e.Key(), Dir: dir})
	}
	return out
}

// UncoveredShapes returns, one line each with the code that issued it, the recorded shapes on
// collections with declared indexes that none of those indexes serves. Collections on which
// the process declared no index are not judged (their store's EnsureIndexes did not run here).
func UncoveredShapes() []string {
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	var out []string
	for _, seen := range recorder.shapes {
		s := seen.shape
		idx, declared := recorder.indexes[s.Collection]
		if !declared || Covered(s, idx) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (from %s)", s, seen.caller))
	}
	sort.Strings(out)
	return out
}

// RecordedShapes returns every shape recorded so far, for explain.
func RecordedShapes() []Shape {
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	out := make([]Shape, 0, len(recorder.shapes))
	for _, s := range recorder.shapes {
		out = append(out, s.shape)
	}
	return out
}

// Covered reports whether one of indexes serves s, read as MongoDB's ESR guideline: the index
// starts with equality fields of the query, continues with its sort (if any) in order or all
// reversed, and may then take a range field; it must use at least one key. A query on _id is
// served by the _id index, and an empty filter without sort reads everything by design.
// https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/
func Covered(s Shape, indexes [][]SortKey) bool {
	if slices.Contains(s.Eq, "_id") || slices.Contains(s.Range, "_id") {
		return true
	}
	if len(s.Eq) == 0 && len(s.Range) == 0 && len(s.Sort) == 0 {
		return true
	}
	for _, keys := range append(slices.Clone(indexes), []SortKey{{Field: "_id", Dir: 1}}) {
		if serves(s, keys) {
			return true
		}
	}
	return false
}

func serves(s Shape, keys []SortKey) bool {
	// A sort key on a field the filter fixes by equality orders nothing; MongoDB ignores it.
	s.Sort = slices.DeleteFunc(slices.Clone(s.Sort), func(k SortKey) bool { return slices.Contains(s.Eq, k.Field) })
	i := 0
	for i < len(keys) && slices.Contains(s.Eq, keys[i].Field) {
		i++
	}
	if len(s.Sort) > 0 {
		if !sortMatches(s.Sort, keys[i:]) {
			return false
		}
		i += len(s.Sort)
	}
	if i < len(keys) && slices.Contains(s.Range, keys[i].Field) {
		i++
	}
	return i > 0
}

func sortMatches(want, keys []SortKey) bool {
	if len(keys) < len(want) {
		return false
	}
	same, reversed := true, true
	for j, w := range want {
		if keys[j].Field != w.Field {
			return false
		}
		same = same && keys[j].Dir == w.Dir
		reversed = reversed && keys[j].Dir == -w.Dir
	}
	return same || reversed
}
