package embeddedmongo

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The guarded writes taskloom sends must reach FerretDB with a lone _id, or each costs a scan
// of its collection (a step's record and a task's finish scanned every row ever written: 60 ms
// a write at 900 rows on the dev VM, against 1.5 ms decided). Which shapes the proxy decides and
// what it sends for each document state; TestGuardedWritesMatchAsMongoDB and
// TestGuardedUpsertsAsMongoDB hold that the result is MongoDB's.
func TestGuardedShapesAreDecided(t *testing.T) {
	open := bson.D{{Key: "$in", Value: bson.A{"pending", "processing"}}}
	finish := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "success"}}}}
	stmt := func(filter bson.D, upsert bool) bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "q", Value: filter}, {Key: "u", Value: finish}, {Key: "upsert", Value: upsert}})
		return b
	}
	doc := func(status string) bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "_id", Value: "t:0"}, {Key: "status", Value: status}})
		return b
	}
	byID := bson.D{{Key: "_id", Value: "t:0"}, {Key: "status", Value: open}}
	cases := []struct {
		name    string
		st      bson.Raw
		doc     bson.Raw
		decided bool
		sendID  string
	}{
		{"finish of an open task", stmt(byID, false), doc("processing"), true, "t:0"},
		{"finish of a finished task", stmt(byID, false), doc("success"), true, noMatchID},
		{"finish of no task", stmt(byID, false), nil, true, noMatchID},
		{"step upsert, no row yet", stmt(byID, true), nil, true, "t:0"},
		{"step upsert, open row", stmt(byID, true), doc("pending"), true, "t:0"},
		{"step upsert, finished row (duplicate key, left to FerretDB)", stmt(byID, true), doc("success"), false, ""},
		{"upsert whose equality shapes the insert", stmt(bson.D{{Key: "_id", Value: "t:0"}, {Key: "owner", Value: "w"}}, true), nil, false, ""},
		{"range on a missing field", stmt(bson.D{{Key: "_id", Value: "t:0"}, {Key: "n", Value: bson.D{{Key: "$gt", Value: 1}}}}, false), doc("x"), true, noMatchID},
		{"lease live at an instant", stmt(bson.D{{Key: "_id", Value: "t:0"}, {Key: "status", Value: bson.D{{Key: "$gte", Value: "p"}}}}, false), doc("pending"), true, "t:0"},
		{"range and another operator", stmt(bson.D{{Key: "_id", Value: "t:0"}, {Key: "n", Value: bson.D{{Key: "$gt", Value: 1}, {Key: "$lt", Value: 3}}}}, false), doc("x"), false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := guardOf(tc.st, "q", "u")
			if !ok {
				if tc.decided {
					t.Fatal("shape not decided")
				}
				return
			}
			g.at = &tc.st
			out, ok := g.decide(tc.doc)
			if ok != tc.decided {
				t.Fatalf("decided %v; want %v", ok, tc.decided)
			}
			if !ok {
				return
			}
			q := out.Lookup("q").Document()
			if n, _ := q.Elements(); len(n) != 1 || q.Lookup("_id").StringValue() != tc.sendID {
				t.Errorf("sent filter %v; want a lone _id %q", q, tc.sendID)
			}
		})
	}
}
