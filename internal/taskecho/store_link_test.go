package taskecho_test

import (
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The domain's tests run on the MongoDB store; this package, outside the domain, links it in.
func init() {
	taskecho.SetTestStore(func(db *mongo.Database) taskecho.Store { return taskechodb.New(db) }, taskechodb.EnsureIndexes)
}
