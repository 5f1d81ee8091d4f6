package taskecho

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
)

// Collection names.
const (
	CollProjects = "projects"
	CollQueues   = "queues"
	CollTasks    = "tasks"
	CollAudit    = "audit_log"
)

// Settings are the seed's configuration items (see internal/config/echo.go for the env vars).
type Settings struct {
	// PullTimeout is how long a lease lasts (pull_timeout, default 1 h).
	PullTimeout time.Duration
	// PullBatchSize caps limit on every pull (pull_batch_size, default 100).
	PullBatchSize int
	// TaskExpiry, when positive, gives server tasks created without expires_at an expiry of
	// created_at + TaskExpiry (task_expiry_time; 0 = never expire).
	TaskExpiry time.Duration
	// TaskExpiryAction says what the sweeper does with expired, unpulled server tasks:
	// "archive" (set archived_at, keep the document) or "delete" (soft delete).
	TaskExpiryAction string
	// ResetClearPullStatus / RerunClearPullStatus: whether reset / re-run release leases.
	ResetClearPullStatus bool
	RerunClearPullStatus bool
	// ConflictPolicy is the default push conflict rule when neither the request nor the project
	// says otherwise: overwrite (TaskEcho's behaviour) or reject.
	ConflictPolicy string
	// ClaimRounds bounds the find+claim rounds of one pull call.
	ClaimRounds int
}

// DefaultSettings are the seed's defaults.
func DefaultSettings() Settings {
	return Settings{
		PullTimeout:          time.Hour,
		PullBatchSize:        100,
		TaskExpiryAction:     "archive",
		ResetClearPullStatus: true,
		RerunClearPullStatus: true,
		ConflictPolicy:       ConflictOverwrite,
		ClaimRounds:          6,
	}
}

// Validate fails loudly on settings that would make pulls misbehave.
func (s Settings) Validate() error {
	switch {
	case s.PullTimeout <= 0:
		return fmt.Errorf("echo settings: pull timeout must be positive, got %s", s.PullTimeout)
	case s.PullBatchSize < 1:
		return fmt.Errorf("echo settings: pull batch size must be at least 1, got %d", s.PullBatchSize)
	case s.TaskExpiryAction != "archive" && s.TaskExpiryAction != "delete":
		return fmt.Errorf("echo settings: task expiry action must be archive or delete, got %q", s.TaskExpiryAction)
	case s.ConflictPolicy != ConflictOverwrite && s.ConflictPolicy != ConflictReject:
		return fmt.Errorf("echo settings: conflict policy must be overwrite or reject, got %q", s.ConflictPolicy)
	case s.ClaimRounds < 1:
		return fmt.Errorf("echo settings: claim rounds must be at least 1, got %d", s.ClaimRounds)
	}
	return nil
}

// Actor is who performs an operation: the API key's name (recorded as pulled_by / released_by)
// and its id for the audit log.
type Actor struct {
	Name  string
	KeyID string
}

// Service holds every TaskEcho business operation. It is safe for concurrent use and keeps no
// state of its own beyond its clients and the candidate reads of pulls now running (see
// pull_share.go): every replica works on the same Mongo documents.
type Service struct {
	db       *mongo.Database
	projects *mongo.Collection
	queues   *mongo.Collection
	tasks    *mongo.Collection
	audit    *mongo.Collection
	set      Settings
	metrics  *Metrics
	log      *slog.Logger
	now      func() time.Time
	share    *candidateShare
	// pushFault, when set (tests only), runs a push's bulk write instead of the collection.
	pushFault func(context.Context, *mongo.Collection, []mongo.WriteModel) (*mongo.BulkWriteResult, error)
	// beforeLeaseWrite, when set (tests only), runs between a batch release/confirm's decision
	// and its write; an error ends the call there, as a crash would.
	beforeLeaseWrite func() error
}

// NewService builds the service; metrics may be nil (a private registry is used).
func NewService(db *mongo.Database, set Settings, metrics *Metrics, log *slog.Logger) (*Service, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{
		db: db, projects: db.Collection(CollProjects), queues: db.Collection(CollQueues),
		tasks: db.Collection(CollTasks), audit: db.Collection(CollAudit),
		set: set, metrics: metrics, log: log.With("subsystem", "taskecho"),
		now:   func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
		share: newCandidateShare(),
	}, nil
}

// Settings returns the service's configuration.
func (s *Service) Settings() Settings { return s.set }

// Metrics returns the service's Prometheus collectors.
func (s *Service) Metrics() *Metrics { return s.metrics }

// Now is the service's clock, for callers that stamp data the service stores (the demo seed).
func (s *Service) Now() time.Time { return s.now() }

// SetClock replaces the clock; tests use it to move leases past their expiry.
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// EnsureIndexes creates the service's indexes (see the package function EnsureIndexes).
func (s *Service) EnsureIndexes(ctx context.Context) error { return EnsureIndexes(ctx, s.db) }

// EnsureIndexes creates the seed's indexes ("数据库索引") and the ones the pull query, the
// sweeper and the uniqueness rules need, on db's echo collections. Creating an existing index is
// a no-op. internal/schema runs it with every other store's at start.
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
