package taskecho

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// SetTestStore sets the store the fixtures build and how its indexes are made.
func SetTestStore(store func(*mongo.Database) Store, indexes func(context.Context, *mongo.Database) error) {
	newTestStore, ensureTestIndexes = store, indexes
}
