package devstack_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The proxy answers guarded writes ({_id, field: value, …}) from a lone-_id lookup. Each case
// is MongoDB's documented equality rule (manual: "Query on Embedded/Nested Documents", "Query
// for Null or Missing Fields", "Query an Array" — an array field matches when an element does),
// and the write must match exactly when MongoDB's would.
func TestGuardedWritesMatchAsMongoDB(t *testing.T) {
	ctx := context.Background()
	c := testenv.Mongo(t).Collection("guards")
	doc := bson.D{{Key: "_id", Value: "d"}, {Key: "rev", Value: int32(3)}, {Key: "lease", Value: "L1"},
		{Key: "gone", Value: nil}, {Key: "tags", Value: bson.A{"a", "b"}}, {Key: "n", Value: 0}}
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
