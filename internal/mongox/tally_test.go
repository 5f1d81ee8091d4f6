package mongox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTallyCountsOnlyCommandsUnderItsContext(t *testing.T) {
	c, err := mongo.Connect(options.Client().ApplyURI(testenv.MongoURI(t)).SetMonitor(mongox.Monitor(nil)).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	db := c.Database(testenv.Unique("tally_"))
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = c.Disconnect(context.Background()) })
	coll := db.Collection("things")

	outer, all := mongox.WithTally(context.Background())
	inner, one := mongox.WithTally(outer)
	if _, err := coll.InsertOne(inner, bson.M{"_id": 1, "n": 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(outer, bson.M{"_id": 1}, bson.M{"$inc": bson.M{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(context.Background(), bson.M{"_id": 1}).Err(); err != nil {
		t.Fatal(err)
	}
	if one.Total() != 1 || all.Total() != 2 {
		t.Fatalf("inner %s; outer %s; want 1 and 2", one, all)
	}
	if got := all.Commands()[1]; got.Name != "update" || got.Collection != "things" {
		t.Fatalf("second command = %s on %q, want update on things", got.Name, got.Collection)
	}
	if !strings.Contains(all.String(), "insert things ×1") {
		t.Fatalf("summary %q", all.String())
	}
	all.Reset()
	if all.Total() != 0 {
		t.Fatalf("after Reset: %s", all)
	}
}

func TestCommandCounterCountsEveryCommandByNameAndCollection(t *testing.T) {
	reg := prometheus.NewRegistry()
	counted := mongox.NewCommandCounter(reg)
	c, err := mongo.Connect(options.Client().ApplyURI(testenv.MongoURI(t)).SetMonitor(mongox.Monitor(counted)).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	db := c.Database(testenv.Unique("counter_"))
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = c.Disconnect(context.Background()) })
	coll := db.Collection("things")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.M{"_id": 1}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := coll.FindOne(ctx, bson.M{"_id": 1}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Untallied commands count too: the counter is the process's, not an operation's.
	if got := testutil.ToFloat64(counted.WithLabelValues("insert", "things")); got != 1 {
		t.Errorf("insert things = %v, want 1", got)
	}
	if got := testutil.ToFloat64(counted.WithLabelValues("find", "things")); got != 2 {
		t.Errorf("find things = %v, want 2", got)
	}
	if got := testutil.ToFloat64(counted.WithLabelValues("hello", "")); got != 0 {
		t.Errorf("connection chatter counted %v times", got)
	}
}

// EnsureIndexes on an indexed collection sends one listIndexes and creates nothing.
func TestEnsureIndexesSendsOnlyWhatIsMissing(t *testing.T) {
	db := testenv.Mongo(t)
	coll := db.Collection("indexed")
	named := mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetName("k_named")}
	ctx, tally := mongox.WithTally(context.Background())
	if err := mongox.EnsureIndexes(ctx, coll, named); err != nil {
		t.Fatal(err)
	}
	if got := tally.Commands(); len(got) != 2 || got[1].Name != "createIndexes" {
		t.Fatalf("first run: %s, want listIndexes and one createIndexes", tally)
	}
	tally.Reset()
	if err := mongox.EnsureIndexes(ctx, coll, named); err != nil {
		t.Fatal(err)
	}
	if got := tally.Commands(); len(got) != 1 || got[0].Name != "listIndexes" {
		t.Fatalf("second run: %s, want one listIndexes", tally)
	}
}
