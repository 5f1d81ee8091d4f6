package embeddedmongo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The proxy answers guarded writes ({_id, field: value, …}) from a lone-_id lookup. Each case
// is MongoDB's documented equality rule (manual: "Query on Embedded/Nested Documents", "Query
// for Null or Missing Fields", "Query an Array" — an array field matches when an element does)
// or operator rule (manual, query operators: $in "selects the documents where the value of a
// field equals any value in the specified array", $nin "the field value is not in the specified
// array or the field does not exist", $ne "the value of the field is not equal to the specified
// value ... includes documents that do not contain the field", $exists true "matches the
// documents that contain the field, including documents where the field value is null"), and the
// write must match exactly when MongoDB's would.
func TestGuardedWritesMatchAsMongoDB(t *testing.T) {
	ctx := context.Background()
	expires := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	c := testenv.Mongo(t).Collection("guards")
	doc := bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: int32(3)}, {Key: "lease", Value: "L1"},
		{Key: "gone", Value: nil}, {Key: "tags", Value: bson.A{"a", "b"}}, {Key: "n", Value: 0}, {Key: "exp", Value: expires}}
	cases := []struct {
		name   string
		filter bson.D
		match  bool
	}{
		{"equal int", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: 3}}, true},
		{"int64 equals int32", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: int64(3)}}, true},
		{"double equals int", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: 3.0}}, true},
		{"stale rev", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: 2}}, false},
		{"string guard", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: "L1"}, {Key: "rev", Value: 3}}, true},
		{"wrong string", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: "L2"}}, false},
		{"null matches null", bson.D{{Key: "_id", Value: "d"}, {Key: "gone", Value: nil}}, true},
		{"null matches missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: nil}}, true},
		{"null does not match a value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: nil}}, false},
		{"array contains", bson.D{{Key: "_id", Value: "d"}, {Key: "tags", Value: "b"}}, true},
		{"array lacks", bson.D{{Key: "_id", Value: "d"}, {Key: "tags", Value: "z"}}, false},
		{"no such document", bson.D{{Key: "_id", Value: "x"}, {Key: "rev", Value: 3}}, false},
		{"type differs", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: "3"}}, false},
		{"$in holds the value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: in("L0", "L1")}}, true},
		{"$in lacks the value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: in("L0", "L2")}}, false},
		{"$in compares numbers by value", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: in(int64(3), "x")}}, true},
		{"$in null matches missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: in(nil, "x")}}, true},
		{"$in with guard", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: in("L1")}, {Key: "rev", Value: 2}}, false},
		{"$in on an array", bson.D{{Key: "_id", Value: "d"}, {Key: "tags", Value: in("z", "a")}}, true},
		{"$nin lacks the value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: op("$nin", bson.A{"L0"})}}, true},
		{"$nin holds the value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: op("$nin", bson.A{"L1"})}}, false},
		{"$nin matches missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: op("$nin", bson.A{"L1"})}}, true},
		{"$ne differs", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: op("$ne", "L2")}}, true},
		{"$ne equal", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: op("$ne", 3.0)}}, false},
		{"$ne matches missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: op("$ne", "x")}}, true},
		{"$ne null does not match null", bson.D{{Key: "_id", Value: "d"}, {Key: "gone", Value: op("$ne", nil)}}, false},
		{"$exists true matches null", bson.D{{Key: "_id", Value: "d"}, {Key: "gone", Value: op("$exists", true)}}, true},
		{"$exists true on missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: op("$exists", true)}}, false},
		{"$exists false on missing", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: op("$exists", false)}}, true},
		{"$exists false on a value", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: op("$exists", false)}}, false},
		{"$in on no document", bson.D{{Key: "_id", Value: "x"}, {Key: "lease", Value: in("L1", "L2")}}, false},
		// A lease live at an instant, as taskecho's confirm guards it: MongoDB compares a date with
		// dates only (type bracketing), numbers by value, strings by bytes; a missing field, null
		// or another type matches no range.
		{"$gt a date before", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: "L1"}, {Key: "exp", Value: op("$gt", expires.Add(-time.Second))}}, true},
		{"$gt the date itself", bson.D{{Key: "_id", Value: "d"}, {Key: "exp", Value: op("$gt", expires)}}, false},
		{"$gte the date itself", bson.D{{Key: "_id", Value: "d"}, {Key: "exp", Value: op("$gte", expires)}}, true},
		{"$lt a date after", bson.D{{Key: "_id", Value: "d"}, {Key: "exp", Value: op("$lt", expires.Add(time.Second))}}, true},
		{"$gt a number on a date", bson.D{{Key: "_id", Value: "d"}, {Key: "exp", Value: op("$gt", 0)}}, false},
		{"$lte compares numbers by value", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: op("$lte", 3.0)}}, true},
		{"$lt a smaller number", bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: op("$lt", int64(3))}}, false},
		{"$gt a string", bson.D{{Key: "_id", Value: "d"}, {Key: "lease", Value: op("$gt", "L0")}}, true},
		{"$gt on a missing field", bson.D{{Key: "_id", Value: "d"}, {Key: "absent", Value: op("$gt", expires)}}, false},
		{"$lt on null", bson.D{{Key: "_id", Value: "d"}, {Key: "gone", Value: op("$lt", 5)}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.InsertOne(ctx, doc); err != nil {
				t.Fatal(err)
			}
			inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
			up, err := c.UpdateOne(ctx, tc.filter, inc)
			if err != nil {
				t.Fatal(err)
			}
			bulk, err := c.BulkWrite(ctx, []mongo.WriteModel{mongo.NewUpdateOneModel().SetFilter(tc.filter).SetUpdate(inc)})
			if err != nil {
				t.Fatal(err)
			}
			fam := c.FindOneAndUpdate(ctx, tc.filter, inc, options.FindOneAndUpdate().SetReturnDocument(options.After))
			want := map[bool]int64{true: 1, false: 0}[tc.match]
			if up.MatchedCount != want || bulk.MatchedCount != want || (fam.Err() == nil) != tc.match {
				t.Fatalf("updateOne matched %d, bulkWrite %d, findOneAndUpdate err %v; want match=%v",
					up.MatchedCount, bulk.MatchedCount, fam.Err(), tc.match)
			}
			var got struct{ N int }
			if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "d"}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got.N != int(3*want) {
				t.Fatalf("n = %d after three guarded $inc; want %d", got.N, 3*want)
			}
			del, err := c.DeleteOne(ctx, tc.filter)
			if err != nil || del.DeletedCount != want {
				t.Fatalf("deleteOne deleted %d (%v); want %d", del.DeletedCount, err, want)
			}
		})
	}
}

// MongoDB runs a command's statements in order, each against the document as the earlier ones
// left it ("The update command ... performs the updates in the order specified", and each
// single-document update is atomic): of two statements with the same guard on one document,
// only the first matches. The proxy decides guards before sending the command, so it must not
// decide a document twice from one lookup.
// https://www.mongodb.com/docs/manual/reference/command/update/#behavior
func TestRepeatedGuardInOneCommandMatchesOnce(t *testing.T) {
	ctx := context.Background()
	c := testenv.Mongo(t).Collection("repeated_guards")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	claim := mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: 0}}).
		SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
	for _, ordered := range []bool{true, false} {
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "d"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rev", Value: 0}}}}); err != nil {
			t.Fatal(err)
		}
		r, err := c.BulkWrite(ctx, []mongo.WriteModel{claim, claim}, options.BulkWrite().SetOrdered(ordered))
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Rev int }
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "d"}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if r.MatchedCount != 1 || got.Rev != 1 {
			t.Errorf("ordered=%v: two statements with one guard matched %d, rev %d; want 1 and 1", ordered, r.MatchedCount, got.Rev)
		}
	}
}

// The proxy looks up every document of a command before it decides any guard; each guard must
// be decided against its own document. In one bulk write over 40 documents, statements with a
// current guard, a stale one and no document at all alternate, across the proxy's chunks.
func TestGuardsOfOneCommandAreDecidedEachAgainstItsDocument(t *testing.T) {
	ctx := context.Background()
	c := testenv.Mongo(t).Collection("many_guards")
	const docs = 40
	var want []string
	var models []mongo.WriteModel
	for i := range docs {
		id := fmt.Sprintf("d%02d", i)
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: i}}); err != nil {
			t.Fatal(err)
		}
		guard := i // current
		switch i % 3 {
		case 1:
			guard = i + 1 // stale
		case 2:
			id = "none-" + id // no such document
		default:
			want = append(want, id)
		}
		models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: guard}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "won", Value: true}}}}))
	}
	r, err := c.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		t.Fatal(err)
	}
	if r.MatchedCount != int64(len(want)) || r.ModifiedCount != int64(len(want)) {
		t.Errorf("matched %d, modified %d; want %d", r.MatchedCount, r.ModifiedCount, len(want))
	}
	cur, err := c.Find(ctx, bson.D{{Key: "won", Value: true}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var won []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &won); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range won {
		got = append(got, w.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("changed %v; want %v", got, want)
	}
}

func in(vals ...any) bson.D { return op("$in", bson.A(vals)) }

func op(name string, arg any) bson.D { return bson.D{{Key: name, Value: arg}} }

// An upsert with a guarded filter updates the document when it matches, inserts when there is
// no document with that _id, and fails with a duplicate key when one exists but does not match
// (MongoDB manual, db.collection.updateOne, "Upsert": "If no document matches the filter, a new
// document is inserted based on the filter and update parameters", and an insert of an existing
// _id is error 11000, "Unique Indexes"). The inserted document holds the filter's equality
// clauses — overwritten by the update's $set when it names the same field — and no operator
// clause ("Upsert with Operator Expressions": the operator clauses are not copied).
func TestGuardedUpsertsAsMongoDB(t *testing.T) {
	ctx := context.Background()
	c := testenv.Mongo(t).Collection("guarded_upserts")
	open := in("pending", "processing")
	set := func(fields ...bson.E) bson.D {
		return bson.D{{Key: "$set", Value: bson.D(fields)}, {Key: "$setOnInsert", Value: bson.D{{Key: "made", Value: "insert"}}}}
	}
	done := bson.E{Key: "status", Value: "success"}
	cases := []struct {
		name     string
		existing bson.D // nil: no document
		filter   bson.D
		update   bson.D
		dupKey   bool
		want     map[string]any // the document afterwards
	}{
		{"open document is updated", bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: "processing"}},
			bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: open}}, set(done),
			false, map[string]any{"_id": "s", "status": "success"}},
		{"missing document is inserted", nil,
			bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: open}}, set(done),
			false, map[string]any{"_id": "s", "status": "success", "made": "insert"}},
		{"finished document is a duplicate key", bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: "success"}},
			bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: open}}, set(bson.E{Key: "status", Value: "failed"}),
			true, map[string]any{"_id": "s", "status": "success"}},
		{"equality overwritten by $set", nil,
			bson.D{{Key: "_id", Value: "s"}, {Key: "status", Value: "pending"}}, set(bson.E{Key: "status", Value: "processing"}),
			false, map[string]any{"_id": "s", "status": "processing", "made": "insert"}},
		{"equality copied into the insert", nil,
			bson.D{{Key: "_id", Value: "s"}, {Key: "owner", Value: "w1"}}, set(done),
			false, map[string]any{"_id": "s", "owner": "w1", "status": "success", "made": "insert"}},
		{"$ne is not copied", nil,
			bson.D{{Key: "_id", Value: "s"}, {Key: "owner", Value: op("$ne", "w2")}}, set(done),
			false, map[string]any{"_id": "s", "status": "success", "made": "insert"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if tc.existing != nil {
				if _, err := c.InsertOne(ctx, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			_, err := c.UpdateOne(ctx, tc.filter, tc.update, options.UpdateOne().SetUpsert(true))
			if mongo.IsDuplicateKeyError(err) != tc.dupKey || (err != nil && !tc.dupKey) {
				t.Fatalf("upsert: %v; want duplicate key %v", err, tc.dupKey)
			}
			var got map[string]any
			if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "s"}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("document %v; want %v", got, tc.want)
			}
		})
	}
}
