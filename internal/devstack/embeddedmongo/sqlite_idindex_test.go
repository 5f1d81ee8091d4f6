package embeddedmongo_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// FerretDB's own _id lookups must be index searches, not table scans, in every collection —
// also one dropped and created again.
func TestEmbeddedMongoLooksUpIDsThroughAnIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	uri := startEmbedded(t, dir)
	coll := connect(t, uri).Database("idx").Collection("things")
	insert := func() {
		if _, err := coll.InsertOne(ctx, bson.M{"_id": "a", "n": 1}); err != nil {
			t.Fatal(err)
		}
	}
	insert()
	assertIndexedLookup(t, filepath.Join(dir, "idx.sqlite"), "things")
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	insert()
	assertIndexedLookup(t, filepath.Join(dir, "idx.sqlite"), "things")
	var got bson.M
	if err := coll.FindOneAndUpdate(ctx, bson.M{"_id": "a"}, bson.M{"$inc": bson.M{"n": 1}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got); err != nil || got["n"] != int32(2) {
		t.Fatalf("update through the index: %v %v", got, err)
	}
}

// assertIndexedLookup checks the plan of the query FerretDB runs to find a document by _id.
func assertIndexedLookup(t *testing.T, file, collection string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var table string
	if err := db.QueryRow(`SELECT table_name FROM "_ferretdb_collections" WHERE name = ?`, collection).Scan(&table); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "`+table+`" WHERE _ferretdb_sjson->'$._id' = ?`, `"a"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "USING INDEX") {
		t.Fatalf("_id lookup in %s plans %q, want an index search", table, p)
	}
}
