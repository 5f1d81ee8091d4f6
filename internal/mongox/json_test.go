package mongox

import (
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestJSONMapTurnsBSONIntoJSONShapes(t *testing.T) {
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	got := JSONMap(map[string]any{
		"n": int32(3), "big": int64(4), "i": 5, "s": "x",
		"doc":  bson.D{{Key: "a", Value: bson.A{int32(1), bson.M{"b": int64(2)}}}},
		"list": []any{bson.DateTime(at.UnixMilli())},
	})
	want := map[string]any{
		"n": 3.0, "big": 4.0, "i": 5.0, "s": "x",
		"doc":  map[string]any{"a": []any{1.0, map[string]any{"b": 2.0}}},
		"list": []any{"2026-11-22T08:00:00Z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("JSONMap = %#v\nwant %#v", got, want)
	}
	if JSONMap(nil) != nil {
		t.Fatal("nil map must stay nil")
	}
}
