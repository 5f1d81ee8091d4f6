package mongox

import (
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Filters built from optional fields: an empty field adds no condition, so a filter form's blank
// inputs match everything.

// EqualIfSet appends key: value to q when value is not empty, and returns q.
func EqualIfSet(q bson.D, key, value string) bson.D {
	if value == "" {
		return q
	}
	return append(q, bson.E{Key: key, Value: value})
}

// BetweenIfSet appends key: {$gte: since, $lte: until} to q with the bounds that are set (both
// inclusive), and returns q; q as it is when neither is.
func BetweenIfSet(q bson.D, key string, since, until *time.Time) bson.D {
	r := bson.D{}
	if since != nil {
		r = append(r, bson.E{Key: "$gte", Value: *since})
	}
	if until != nil {
		r = append(r, bson.E{Key: "$lte", Value: *until})
	}
	if len(r) == 0 {
		return q
	}
	return append(q, bson.E{Key: key, Value: r})
}

// ContainsIfSet appends key: /text/i to q when text is not empty (a case-insensitive substring
// match, text taken literally), and returns q.
func ContainsIfSet(q bson.D, key, text string) bson.D {
	if text == "" {
		return q
	}
	return append(q, bson.E{Key: key, Value: bson.Regex{Pattern: regexp.QuoteMeta(text), Options: "i"}})
}
