// Package taskechodb is the task server's MongoDB store: it implements taskecho.Store with
// guarded single-document writes (filtered on the revision read), the guarded bulk write that
// pulls, batch confirms and releases, queue operations and sweeps use (its statements stamped
// with a write_id marker), the push's bulk write, the queries and the indexes they need. It is
// the one taskecho package besides the read models (listing, stats, migrate) that talks to Mongo.
package taskechodb

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// Collection names.
const (
	CollProjects   = "projects"
	CollQueues     = "queues"
	CollTasks      = "tasks"
	CollAudit      = "audit_log"
	CollExecutions = "executions"
)

// Store is the task server's Mongo access; it implements taskecho.Store.
type Store struct {
	db         *mongo.Database
	projects   *mongo.Collection
	queues     *mongo.Collection
	tasks      *mongo.Collection
	audit      *mongo.Collection
	executions *mongo.Collection
}

var _ taskecho.Store = (*Store)(nil)

// New wraps a database.
func New(db *mongo.Database) *Store {
	return &Store{db: db, projects: db.Collection(CollProjects), queues: db.Collection(CollQueues),
		tasks: db.Collection(CollTasks), audit: db.Collection(CollAudit), executions: db.Collection(CollExecutions)}
}

// Database is the database the store works on.
func (s *Store) Database() *mongo.Database { return s.db }

// EnsureIndexes creates the store's indexes (see the package function EnsureIndexes).
func (s *Store) EnsureIndexes(ctx context.Context) error { return EnsureIndexes(ctx, s.db) }

// EnsureIndexes creates the indexes of TaskEcho's schema and the ones the pull query, the
// sweeper and the uniqueness rules need, on db's task server collections. Creating an existing
// index is a no-op. internal/schema runs it with every other store's at start.
func EnsureIndexes(ctx context.Context, db *mongo.Database) error {
	idx := func(keys bson.D, name string, unique bool) mongo.IndexModel {
		o := options.Index().SetName(name)
		if unique {
			o.SetUnique(true)
		}
		return mongo.IndexModel{Keys: keys, Options: o}
	}
	sets := map[*mongo.Collection][]mongo.IndexModel{
		db.Collection(CollProjects): {idx(bson.D{{Key: "project_id", Value: 1}}, "project_id_unique", true),
			// The project list's order, and the newest change (polling versions).
			idx(bson.D{{Key: "last_task_at", Value: -1}, {Key: "created_at", Value: -1}}, "last_task_at_created_at", false),
			idx(bson.D{{Key: "updated_at", Value: -1}}, "updated_at", false),
			idx(bson.D{{Key: "metadata.tags", Value: 1}}, "metadata_tags", false)},
		db.Collection(CollQueues): {idx(bson.D{{Key: "project_id", Value: 1}, {Key: "queue_id", Value: 1}}, "project_queue_unique", true),
			idx(bson.D{{Key: "updated_at", Value: -1}}, "updated_at", false),
			// A project's queue list, in the project list's order.
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "last_task_at", Value: -1}, {Key: "created_at", Value: -1}}, "project_last_task_at", false)},
		db.Collection(CollTasks): {
			idx(bson.D{{Key: "key", Value: 1}}, "key_unique", true),
			idx(bson.D{{Key: "source", Value: 1}}, "source", false),
			idx(bson.D{{Key: "pulled_at", Value: 1}}, "pulled_at", false),
			idx(bson.D{{Key: "source", Value: 1}, {Key: "pulled_at", Value: 1}}, "source_pulled_at", false),
			idx(bson.D{{Key: "deleted_at", Value: 1}}, "deleted_at", false),
			idx(bson.D{{Key: "server_modified_at", Value: 1}}, "server_modified_at", false),
			idx(bson.D{{Key: "priority", Value: 1}}, "priority", false),
			// The pull query: equality on project/scope (queue_id, null at project level)/source/
			// deleted, then the whole sort (pullOrder, whose _id tiebreaker makes the order total),
			// so a pull walks its own scope's tasks only.
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "queue_id", Value: 1}, {Key: "source", Value: 1}, {Key: "deleted_at", Value: 1},
				{Key: "priority_rank", Value: -1}, {Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}, "pull_scope_order", false),
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "queue_id", Value: 1}, {Key: "task_id", Value: 1}}, "project_queue_task", false),
			// A queue's (or the project level's) task list in creation order, and its newest change.
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "queue_id", Value: 1}, {Key: "deleted_at", Value: 1},
				{Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}, "project_queue_created", false),
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "queue_id", Value: 1}, {Key: "updated_at", Value: -1}}, "project_queue_updated", false),
			// Pending pulls of a project, oldest pull first.
			idx(bson.D{{Key: "project_id", Value: 1}, {Key: "pulled_at", Value: 1}}, "project_pulled_at", false),
			idx(bson.D{{Key: "lease_id", Value: 1}}, "lease_id", false),
			idx(bson.D{{Key: "lease_expires_at", Value: 1}}, "lease_expires_at", false),
			idx(bson.D{{Key: "expires_at", Value: 1}}, "expires_at", false),
		},
		db.Collection(CollAudit): {idx(bson.D{{Key: "project_id", Value: 1}, {Key: "at", Value: -1}, {Key: "_id", Value: -1}}, "project_at_id", false),
			idx(bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}, "at_id", false)},
	}
	for coll, models := range sets {
		if err := mongox.EnsureIndexes(ctx, coll, models...); err != nil {
			return err
		}
	}
	return nil
}
