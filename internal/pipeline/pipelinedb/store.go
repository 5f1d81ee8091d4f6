// Package pipelinedb is the pipelines' MongoDB store: schemas, tasks, steps, providers, functions,
// provider health and quotas. It is the one pipeline package that talks to Mongo; the
// workflows and activities see it only through the interfaces they declare.
package pipelinedb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// Collection names: schemas, tasks, steps and provider health, plus providers, functions, quotas
// and the recent-call log the health check aggregates.
const (
	CollSchemas   = "pipeline_schemas"
	CollTasks     = "pipeline_tasks"
	CollSteps     = "task_steps"
	CollHealth    = "provider_health"
	CollProviders = "providers"
	CollFunctions = "functions"
	CollQuotas    = "quotas"
	CollCalls     = "provider_calls"
)

// Store is the pipelines' Mongo access. Every state change is one single-document write guarded by
// the state it expects (MongoDB's atomic single-document updates), or an insert whose unique key
// decides; there are no multi-document transactions.
type Store struct {
	db  *mongo.Database
	now func() time.Time
}

// New wraps a database.
func New(db *mongo.Database) *Store {
	return &Store{db: db, now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// Database is the name of the database the store uses.
func (s *Store) Database() string { return s.db.Name() }

// EnsureIndexes creates the unique and lookup indexes; it is safe to run on every start.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	idx := []struct {
		coll   string
		keys   bson.D
		unique bool
	}{
		{CollSchemas, bson.D{{Key: "name", Value: 1}, {Key: "version", Value: 1}}, true},
		// The latest published version of a pipeline.
		{CollSchemas, bson.D{{Key: "name", Value: 1}, {Key: "created_at", Value: -1}}, false},
		{CollSteps, bson.D{{Key: "task_id", Value: 1}, {Key: "step_index", Value: 1}}, true},
		{CollSteps, bson.D{{Key: "status", Value: 1}}, false},
		// The health check's read of the vendor calls finished sync steps keep (RecentCalls).
		{CollSteps, bson.D{{Key: "calls.provider_ref", Value: 1}, {Key: "calls.at", Value: 1}}, false},
		{CollQuotas, bson.D{{Key: "user_id", Value: 1}, {Key: "feature_id", Value: 1}}, true},
		{CollCalls, bson.D{{Key: "provider_ref", Value: 1}, {Key: "at", Value: 1}}, false},
		// Pruning old calls of every provider.
		{CollCalls, bson.D{{Key: "at", Value: 1}}, false},
		// The console's task list (newest first) by status, pipeline or user.
		{CollTasks, bson.D{{Key: "status", Value: 1}, {Key: "_id", Value: -1}}, false},
		{CollTasks, bson.D{{Key: "pipeline", Value: 1}, {Key: "_id", Value: -1}}, false},
		{CollTasks, bson.D{{Key: "user_id", Value: 1}, {Key: "_id", Value: -1}}, false},
		// The quota ledger view: an account's newest tasks.
		{CollTasks, bson.D{{Key: "user_id", Value: 1}, {Key: "feature_id", Value: 1}, {Key: "created_at", Value: -1}}, false},
		// A bulk redrive's tasks: the failed ones by failure time, and the ones it redrove.
		{CollTasks, bson.D{{Key: "status", Value: 1}, {Key: "completed_at", Value: 1}}, false},
		{CollTasks, bson.D{{Key: "redrives.id", Value: 1}}, false},
	}
	for _, i := range idx {
		m := mongo.IndexModel{Keys: i.keys, Options: options.Index().SetUnique(i.unique)}
		if err := mongox.EnsureIndexes(ctx, s.c(i.coll), m); err != nil {
			return err
		}
	}
	return nil
}

// errNotFound is what a lookup that finds no document returns: the domain's ErrNotFound, which
// callers test for, wrapping the driver's ErrNoDocuments, which the HTTP layer's store-error
// mapping answers with 404.
var errNotFound = fmt.Errorf("%w: %w", pipeline.ErrNotFound, mongo.ErrNoDocuments)

func notFound(err error, what string) error {
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%s: %w", what, errNotFound)
	}
	return fmt.Errorf("load %s: %w", what, err)
}
