package mongox

import (
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestOptionalFiltersAddOnlyWhatIsSet(t *testing.T) {
	since := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	until := since.Add(time.Hour)
	q := bson.D{{Key: "status", Value: "failed"}}
	q = EqualIfSet(q, "pipeline", "")
	q = EqualIfSet(q, "user_id", "u1")
	q = BetweenIfSet(q, "completed_at", nil, nil)
	q = BetweenIfSet(q, "failed_at", &since, nil)
	q = BetweenIfSet(q, "suspended_at", &since, &until)
	q = ContainsIfSet(q, "reason", "")
	q = ContainsIfSet(q, "error_reason", "a.b")
	want := bson.D{{Key: "status", Value: "failed"}, {Key: "user_id", Value: "u1"},
		{Key: "failed_at", Value: bson.D{{Key: "$gte", Value: since}}},
		{Key: "suspended_at", Value: bson.D{{Key: "$gte", Value: since}, {Key: "$lte", Value: until}}},
		{Key: "error_reason", Value: bson.Regex{Pattern: `a\.b`, Options: "i"}}}
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("filter = %v, want %v", q, want)
	}
}
