package embeddedmongo

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A find is a full scan on FerretDB v1 unless its filter is a lone _id, however selective the
// filter: reading one document by a unique key ({key: K, deleted_at: null}) decodes every
// document of the collection, and under 8 concurrent clients on 1,000 tasks that read took
// seconds where MongoDB answers it from the unique index. keyLookup does what that index does:
// for a find with a string equality on the single field of a unique index, it looks the matching
// document's _id up in SQLite (through an index on that field it adds beside FerretDB's), and
// sends FerretDB the find as an aggregate whose first stage is a lone-_id $match — which FerretDB
// pushes down to its _id index — followed by the whole original filter, which FerretDB still
// evaluates as MongoDB would. A unique key names at most one document, so nothing else of the
// find (sort, limit, batch size) changes its answer; finds it cannot rewrite go through as they are.

// keyIndexSuffix ends the name of an index keyLookup adds (after the table's and the field's).
const keyIndexSuffix = "__taskloom_key"

// uniqueFieldIndex matches FerretDB's definition of a unique index on one top-level field.
var uniqueFieldIndex = regexp.MustCompile(`^CREATE UNIQUE INDEX "[^"]+" ON "[^"]+" \(_ferretdb_sjson->"([A-Za-z0-9_]+)"\)$`)

// keyLookup knows, per collection, its table and the fields of its single-field unique indexes.
// Writes to it happen under the write lock (idIndexer.ensure); finds read it concurrently.
type keyLookup struct {
	dir  string
	mu   sync.RWMutex
	coll map[string]keyedCollection // database + "." + collection
	dbs  map[string]*sql.DB         // read connections per database
}

type keyedCollection struct {
	table  string
	fields []string
}

func newKeyLookup(dir string) *keyLookup {
	return &keyLookup{dir: dir, coll: map[string]keyedCollection{}, dbs: map[string]*sql.DB{}}
}

// index adds, for each single-field unique index of table, an index on the field's value as SQL
// text (what the lookup compares) and a partial index of the documents where the field is an
// array (an equality also matches an array holding the value, and the lookup must find those too),
// then records the fields for the finds of database.collection.
func (k *keyLookup) index(ctx context.Context, db *sql.DB, database, collection, table string) error {
	rows, err := db.QueryContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, table)
	if err != nil {
		return fmt.Errorf("list unique indexes of %s: %w", table, err)
	}
	var fields []string
	for rows.Next() {
		var def string
		if err := rows.Scan(&def); err != nil {
			rows.Close()
			return fmt.Errorf("list unique indexes of %s: %w", table, err)
		}
		if m := uniqueFieldIndex.FindStringSubmatch(def); m != nil && m[1] != "_id" {
			fields = append(fields, m[1])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list unique indexes of %s: %w", table, err)
	}
	for _, f := range fields {
		for _, q := range []string{
			fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%s)`, table+"_"+f+keyIndexSuffix, table, textOf(f)),
			fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%s) WHERE %s`, table+"_"+f+"_array"+keyIndexSuffix, table, textOf("_id"), isArray(f)),
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("index %s.%s: %w", table, f, err)
			}
		}
	}
	k.mu.Lock()
	k.coll[database+"."+collection] = keyedCollection{table: table, fields: fields}
	k.mu.Unlock()
	return nil
}

// forget drops what is known of database's collections (dropped or renamed), and with dropped
// (the database's file is gone) closes its connections, which would go on reading the deleted file.
func (k *keyLookup) forget(database string, dropped bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if db, ok := k.dbs[database]; ok && dropped {
		_ = db.Close()
		delete(k.dbs, database)
	}
	for key := range k.coll {
		if strings.HasPrefix(key, database+".") {
			delete(k.coll, key)
		}
	}
}

func (k *keyLookup) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, db := range k.dbs {
		_ = db.Close()
	}
}

// textOf is the SQL expression of a top-level field's value as SQL text (a string unquoted).
func textOf(field string) string { return fmt.Sprintf(`(_ferretdb_sjson->>'$."%s"')`, field) }

// isArray is the SQL condition that a top-level field holds an array.
func isArray(field string) string {
	return fmt.Sprintf(`json_type(_ferretdb_sjson, '$."%s"') = 'array'`, field)
}

// findKeys are the find command fields a rewritten find may carry; any other (projection,
// hint, collation, a read concern…) leaves the find as it is.
var findKeys = map[string]bool{"find": true, "filter": true, "sort": true, "limit": true, "skip": true,
	"batchSize": true, "singleBatch": true, "lsid": true, "$db": true, "$clusterTime": true,
	"readPreference": true, "comment": true, "maxTimeMS": true}

// passKeys are the ones the aggregate keeps as they are.
var passKeys = []string{"lsid", "$db", "$clusterTime", "readPreference", "comment", "maxTimeMS"}

// rewriteFind returns req as an aggregate on the _id its unique key names, or req unchanged.
func (k *keyLookup) rewriteFind(req []byte, cmd command) []byte {
	p, err := parseOpMsg(req)
	if err != nil || p.flags != 0 || len(p.seqs) != 0 {
		return req
	}
	filter, ok := p.body.Lookup("filter").DocumentOK()
	if !ok || !onlyKeys(p.body, findKeys) {
		return req
	}
	k.mu.RLock()
	kc, known := k.coll[cmd.db+"."+cmd.collection]
	k.mu.RUnlock()
	if !known {
		return req
	}
	for _, f := range kc.fields {
		v, ok := filter.Lookup(f).StringValueOK()
		if !ok {
			continue
		}
		id, ok := k.idOf(cmd.db, kc.table, f, v)
		if !ok {
			return req
		}
		p.body = aggregateByID(p.body, cmd.collection, filter, id)
		return p.encode(int32(binary.LittleEndian.Uint32(req[8:12])))
	}
	return req
}

func onlyKeys(body bson.Raw, allowed map[string]bool) bool {
	elems, err := body.Elements()
	if err != nil {
		return false
	}
	for _, e := range elems {
		if !allowed[e.Key()] {
			return false
		}
	}
	return true
}

// aggregateByID is the aggregate that answers find body: the document with _id id, if it matches
// filter, after skip.
func aggregateByID(body bson.Raw, collection string, filter bson.Raw, id any) bson.Raw {
	pipeline := bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: id}}}}, bson.D{{Key: "$match", Value: filter}}}
	if skip, ok := body.Lookup("skip").AsInt64OK(); ok && skip > 0 {
		pipeline = append(pipeline, bson.D{{Key: "$skip", Value: skip}})
	}
	agg := bson.D{{Key: "aggregate", Value: collection}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}
	for _, key := range passKeys {
		if v, err := body.LookupErr(key); err == nil {
			agg = append(agg, bson.E{Key: key, Value: v})
		}
	}
	out, err := bson.Marshal(agg)
	if err != nil {
		return body
	}
	return out
}

// idOf looks up the _id of the one document whose field equals value (or holds an array, which
// MongoDB's equality also matches when the array holds value). With none it is noMatchID, which
// no document has; ok is false when there is more than one candidate or the lookup failed.
func (k *keyLookup) idOf(database, table, field, value string) (id any, ok bool) {
	db, err := k.open(database)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q := fmt.Sprintf(`SELECT %[1]s, _ferretdb_sjson->>'$."$s".p._id.t' FROM %[2]q WHERE %[3]s = ?
		UNION ALL SELECT %[1]s, _ferretdb_sjson->>'$."$s".p._id.t' FROM %[2]q WHERE %[4]s LIMIT 2`,
		textOf("_id"), table, textOf(field), isArray(field))
	rows, err := db.QueryContext(ctx, q, value)
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var raw, typ string
		if err := rows.Scan(&raw, &typ); err != nil {
			return nil, false
		}
		id, ok := decodeID(raw, typ)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || len(ids) > 1 {
		return nil, false
	}
	if len(ids) == 0 {
		return noMatchID, true
	}
	return ids[0], true
}

// decodeID turns an _id as FerretDB stores it into the value a filter names it by; only the
// _id types FerretDB pushes down (string, ObjectId) are decoded.
func decodeID(raw, typ string) (any, bool) {
	switch typ {
	case "string":
		return raw, true
	case "objectId":
		oid, err := bson.ObjectIDFromHex(raw)
		return oid, err == nil
	}
	return nil, false
}

// open returns the read connections of database's SQLite file.
func (k *keyLookup) open(database string) (*sql.DB, error) {
	k.mu.RLock()
	db, ok := k.dbs[database]
	k.mu.RUnlock()
	if ok {
		return db, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if db, ok := k.dbs[database]; ok {
		return db, nil
	}
	db, err := sql.Open("sqlite", sqliteDSN(k.dir, database, "ro"))
	if err != nil {
		return nil, err
	}
	k.dbs[database] = db
	return db, nil
}
