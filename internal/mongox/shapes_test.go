package mongox

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func raw(t *testing.T, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Shapes read from commands: values and $in are equality, operators ranges, $or one per branch.
func TestShapesOf(t *testing.T) {
	cmd := raw(t, bson.D{{Key: "find", Value: "tasks"},
		{Key: "filter", Value: bson.D{{Key: "queue", Value: "q"}, {Key: "state", Value: bson.M{"$in": bson.A{"a", "b"}}},
			{Key: "at", Value: bson.M{"$lt": 5}}, {Key: "$or", Value: bson.A{bson.M{"x": 1}, bson.M{"y": bson.M{"$exists": true}}}}}},
		{Key: "sort", Value: bson.D{{Key: "prio", Value: -1}}}})
	got := shapesOf("find", "tasks", cmd)
	want := []string{"tasks eq[queue,state,x] sort[prio:-1] range[at]", "tasks eq[queue,state] sort[prio:-1] range[at,y]"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("shape %d = %s; want %s", i, got[i], want[i])
		}
	}
}

// Coverage follows the ESR guideline: equality keys, then the sort, then a range.
func TestCovered(t *testing.T) {
	idx := [][]SortKey{{{"queue", 1}, {"prio", -1}, {"at", 1}}}
	cases := []struct {
		s    Shape
		want bool
	}{
		{Shape{Eq: []string{"queue"}, Sort: []SortKey{{"prio", -1}}, Range: []string{"at"}}, true},
		{Shape{Eq: []string{"queue"}, Sort: []SortKey{{"prio", 1}}}, true}, // reversed
		{Shape{Eq: []string{"queue", "other"}}, true},
		{Shape{Eq: []string{"queue"}, Sort: []SortKey{{"at", 1}}}, false},
		{Shape{Eq: []string{"state"}}, false},
		{Shape{Eq: []string{"_id", "state"}}, true},
		{Shape{}, true},
		{Shape{Sort: []SortKey{{"_id", 1}}}, true},
		// A sort on a field fixed by equality orders nothing (MongoDB ignores it).
		{Shape{Eq: []string{"queue"}, Sort: []SortKey{{"queue", 1}, {"prio", -1}}}, true},
	}
	for _, c := range cases {
		if got := Covered(c.s, idx); got != c.want {
			t.Errorf("Covered(%s) = %v; want %v", c.s, got, c.want)
		}
	}
}
