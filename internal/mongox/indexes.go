// Package mongox holds small helpers over the MongoDB driver that every store shares.
package mongox

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// EnsureIndexes creates the indexes c does not have yet. It lists c's indexes first, so a start
// against an indexed database sends one command per collection, and creates the missing ones
// one at a time: FerretDB v1.24 (the embedded dev database) drops the connection when one
// createIndexes command names several indexes that already exist, and one at a time costs
// nothing on real MongoDB. A model without a name is always sent (creating an existing index
// is a no-op).
func EnsureIndexes(ctx context.Context, c *mongo.Collection, models ...mongo.IndexModel) error {
	specs, err := c.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("list indexes on %s: %w", c.Name(), err)
	}
	have := make(map[string]bool, len(specs))
	for _, s := range specs {
		have[s.Name] = true
	}
	for _, m := range models {
		if name := indexName(m); name != "" && have[name] {
			continue
		}
		if _, err := c.Indexes().CreateOne(ctx, m); err != nil {
			return fmt.Errorf("index on %s: %w", c.Name(), err)
		}
	}
	return nil
}

// indexName is the name m sets, or "" when it leaves the name to the server.
func indexName(m mongo.IndexModel) string {
	if m.Options == nil {
		return ""
	}
	o := &options.IndexOptions{}
	for _, set := range m.Options.List() {
		_ = set(o)
	}
	if o.Name == nil {
		return ""
	}
	return *o.Name
}
