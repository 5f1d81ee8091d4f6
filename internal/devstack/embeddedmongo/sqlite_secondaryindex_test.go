package embeddedmongo_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The embedded database keeps no rows in the SQLite indexes behind non-unique MongoDB indexes
// (FerretDB never reads them), while MongoDB's view of the indexes stays whole: listIndexes
// names every index, dropIndexes and createIndexes work, a unique index still rejects a
// duplicate key, and queries on the indexed fields answer as before.
func TestSecondaryIndexesAreKeptEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	uri := startEmbedded(t, dir)
	coll := connect(t, uri).Database("sec").Collection("things")
	models := []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetName("by_a")},
		{Keys: bson.D{{Key: "b", Value: 1}, {Key: "c", Value: -1}}, Options: options.Index().SetName("by_b_c")},
		{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetName("by_k").SetUnique(true)},
	}
	if _, err := coll.Indexes().CreateMany(ctx, models); err != nil {
		t.Fatal(err)
	}
	for i, d := range []bson.D{
		{{Key: "_id", Value: "x"}, {Key: "a", Value: 2}, {Key: "b", Value: "p"}, {Key: "c", Value: 1}, {Key: "k", Value: "kx"}},
		{{Key: "_id", Value: "y"}, {Key: "a", Value: 1}, {Key: "b", Value: "p"}, {Key: "c", Value: 2}, {Key: "k", Value: "ky"}},
	} {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	file := filepath.Join(dir, "sec.sqlite")
	assertIndexes(t, file, "things", map[string]bool{"by_a": true, "by_b_c": true, "by_k": false})

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "z"}, {Key: "k", Value: "kx"}}); !mongo.IsDuplicateKeyError(err) {
		t.Errorf("insert of a duplicate unique key: %v; want a duplicate key error", err)
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "b", Value: "p"}}, options.Find().SetSort(bson.D{{Key: "a", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &got); err != nil || len(got) != 2 || got[0].ID != "y" || got[1].ID != "x" {
		t.Errorf("find on indexed fields sorted by a: %v (%v); want y, x", got, err)
	}

	if names := indexNames(t, coll); !slices.Equal(names, []string{"_id_", "by_a", "by_b_c", "by_k"}) {
		t.Errorf("listIndexes names %v", names)
	}
	if err := coll.Indexes().DropOne(ctx, "by_a"); err != nil {
		t.Fatalf("drop an emptied index: %v", err)
	}
	if names := indexNames(t, coll); slices.Contains(names, "by_a") {
		t.Errorf("listIndexes names %v after by_a was dropped", names)
	}
	if _, err := coll.Indexes().CreateOne(ctx, models[0]); err != nil {
		t.Fatal(err)
	}
	assertIndexes(t, file, "things", map[string]bool{"by_a": true, "by_b_c": true, "by_k": false})
}

// assertIndexes checks, for each MongoDB index name, whether its SQLite index holds no rows.
func assertIndexes(t *testing.T, file, collection string, empty map[string]bool) {
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
	for name, want := range empty {
		var def string
		if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?`, table+"_"+name).Scan(&def); err != nil {
			t.Fatalf("index %s: %v", name, err)
		}
		if got := strings.HasSuffix(def, " WHERE 0"); got != want {
			t.Errorf("index %s is %q; want empty=%v", name, def, want)
		}
	}
}

func indexNames(t *testing.T, coll *mongo.Collection) []string {
	t.Helper()
	specs, err := coll.Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}
