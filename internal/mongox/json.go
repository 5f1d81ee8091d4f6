package mongox

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// JSONValue turns a value decoded from BSON into the shape encoding/json produces (maps, []any,
// float64, RFC 3339 times), so data read back from Mongo renders and maps exactly like data
// parsed from a request or returned by a workflow.
func JSONValue(v any) any {
	switch t := v.(type) {
	case bson.D:
		m := make(map[string]any, len(t))
		for _, e := range t {
			m[e.Key] = JSONValue(e.Value)
		}
		return m
	case bson.M:
		return JSONMap(t)
	case map[string]any:
		return JSONMap(t)
	case bson.A:
		return jsonSlice(t)
	case []any:
		return jsonSlice(t)
	case int32:
		return float64(t)
	case int64:
		return float64(t)
	case int:
		return float64(t)
	case bson.DateTime:
		return t.Time().UTC().Format(time.RFC3339Nano)
	default:
		return v
	}
}

// JSONMap is JSONValue for a document; nil stays nil.
func JSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = JSONValue(v)
	}
	return out
}

func jsonSlice(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = JSONValue(v)
	}
	return out
}
