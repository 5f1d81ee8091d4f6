package embeddedmongo_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A find naming a unique key is answered from the key's document alone, exactly as MongoDB
// answers it: the rest of the filter still applies (null matches null or missing), an equality
// matches an array holding the value, _ids of either pushed-down type come back, a key no
// document has finds nothing, skip applies — also after the database was dropped and made again.
func TestFindByUniqueKeyAnswersAsMongoDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	uri := startEmbedded(t, dir)
	db := connect(t, uri).Database("keys")
	coll := db.Collection("tasks")
	oid, arr := bson.NewObjectID(), bson.NewObjectID()
	seed := func(id bson.ObjectID) {
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "key", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
			t.Fatal(err)
		}
		docs := []any{
			bson.M{"_id": id, "key": "a", "deleted_at": nil, "n": 1},
			bson.M{"_id": "s", "key": "b", "deleted_at": time.Now()},
			bson.M{"_id": arr, "key": bson.A{"x", "y"}},
			bson.M{"_id": "nokey"},
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	seed(oid)
	cases := []struct {
		name   string
		filter bson.M
		opts   *options.FindOneOptionsBuilder
		want   any // _id, or nil for no document
	}{
		{"live by key", bson.M{"key": "a", "deleted_at": nil}, nil, oid},
		{"missing field is null", bson.M{"key": "x", "deleted_at": nil}, nil, arr},
		{"rest of the filter applies", bson.M{"key": "b", "deleted_at": nil}, nil, nil},
		{"string _id", bson.M{"key": "b"}, nil, "s"},
		{"array holds the value", bson.M{"key": "y"}, nil, arr},
		{"no such key", bson.M{"key": "zz"}, nil, nil},
		{"skip past the one match", bson.M{"key": "a"}, options.FindOne().SetSkip(1), nil},
		{"sort is harmless", bson.M{"key": "a"}, options.FindOne().SetSort(bson.D{{Key: "n", Value: 1}}), oid},
	}
	check := func() {
		t.Helper()
		for _, c := range cases {
			opts := c.opts
			if opts == nil {
				opts = options.FindOne()
			}
			var got bson.M
			err := coll.FindOne(ctx, c.filter, opts).Decode(&got)
			switch {
			case c.want == nil && !errors.Is(err, mongo.ErrNoDocuments):
				t.Errorf("%s: got %v %v, want no document", c.name, got, err)
			case c.want != nil && (err != nil || got["_id"] != c.want):
				t.Errorf("%s: got %v %v, want _id %v", c.name, got, err, c.want)
			}
		}
	}
	check()
	assertKeyLookupIndexed(t, filepath.Join(dir, "keys.sqlite"), "tasks")

	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	oid = bson.NewObjectID()
	cases[0].want, cases[len(cases)-1].want = oid, oid
	seed(oid)
	check()
}

// assertKeyLookupIndexed checks that the proxy's key lookup is an index search.
func assertKeyLookupIndexed(t *testing.T, file, collection string) {
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
	rows, err := db.Query(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "`+table+`" WHERE (_ferretdb_sjson->>'$."key"') = ?`, "a")
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
		t.Fatalf("key lookup in %s plans %q, want an index search", table, p)
	}
}
