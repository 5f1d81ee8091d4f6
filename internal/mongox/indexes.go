// Package mongox holds small helpers over the MongoDB driver that every store shares.
package mongox

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// EnsureIndexes creates each index if it is missing. It sends them one at a time: FerretDB
// v1.24 (the embedded dev database) drops the connection when one createIndexes command names
// several indexes that already exist, and one-at-a-time costs nothing on real MongoDB.
func EnsureIndexes(ctx context.Context, c *mongo.Collection, models ...mongo.IndexModel) error {
	for _, m := range models {
		if _, err := c.Indexes().CreateOne(ctx, m); err != nil {
			return fmt.Errorf("index on %s: %w", c.Name(), err)
		}
	}
	return nil
}
