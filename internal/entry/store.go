package entry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
)

// CollRuns is the seed's workflow_runs collection: one document per idempotency key.
const CollRuns = "workflow_runs"

// ErrNotFound wraps mongo.ErrNoDocuments so the HTTP layer's store mapping answers 404.
var ErrNotFound = fmt.Errorf("entry task not found: %w", mongo.ErrNoDocuments)

// Run is one workflow_runs document. The workflow writes it when it starts (Accept) and updates it
// at every status change, so it answers status queries once the workflow has closed (and
// after Temporal's retention has forgotten it).
type Run struct {
	TaskID          string         `bson:"_id" json:"taskId"`
	IdempotencyKey  string         `bson:"idempotency_key" json:"idempotencyKey"`
	WorkflowID      string         `bson:"workflow_id" json:"workflowId"`
	WorkflowVersion string         `bson:"workflow_version,omitempty" json:"workflowVersion,omitempty"`
	Channel         string         `bson:"channel" json:"channel"`
	Source          string         `bson:"source" json:"source"`
	ChatID          string         `bson:"chat_id" json:"chatId"`
	Status          string         `bson:"status" json:"status"`
	Retry           Retry          `bson:"retry" json:"retry"`
	Attempts        int            `bson:"attempts" json:"attempts"`
	PipelineTaskID  string         `bson:"pipeline_task_id,omitempty" json:"pipelineTaskId,omitempty"`
	Result          map[string]any `bson:"result,omitempty" json:"result,omitempty"`
	LastError       string         `bson:"last_error,omitempty" json:"lastError,omitempty"`
	SuspendedReason string         `bson:"suspended_reason,omitempty" json:"suspendedReason,omitempty"`
	SuspendedAt     *time.Time     `bson:"suspended_at,omitempty" json:"suspendedAt,omitempty"`
	ReplyMessageID  int64          `bson:"reply_message_id,omitempty" json:"replyMessageId,omitempty"`
	// Seq orders the workflow's status writes: a write applies only when it is newer than the
	// stored one, so a late retry of an old activity cannot roll the status back.
	Seq         int        `bson:"seq" json:"-"`
	CreatedAt   time.Time  `bson:"created_at" json:"createdAt"`
	UpdatedAt   time.Time  `bson:"updated_at" json:"updatedAt"`
	CompletedAt *time.Time `bson:"completed_at,omitempty" json:"completedAt,omitempty"`
}

// Store is workflow_runs. Every write is a single-document insert or guarded update.
type Store struct {
	coll *mongo.Collection
	now  func() time.Time
}

// NewStore wraps db.
func NewStore(db *mongo.Database) *Store {
	return &Store{coll: db.Collection(CollRuns), now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

// EnsureIndexes creates the unique idempotency-key index (the seed's "no duplicate workflow_runs"
// guard) and the status index the ops listing uses.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.coll,
		mongo.IndexModel{Keys: bson.D{{Key: "idempotency_key", Value: 1}}, Options: options.Index().SetUnique(true)},
		mongo.IndexModel{Keys: bson.D{{Key: "status", Value: 1}}})
}

// Accept records an accepted task: it inserts run unless a document with its _id (the task id,
// derived from the idempotency key) exists. EntryTaskWorkflow calls it first, through an activity,
// so the document exists exactly when the workflow does: one command, and idempotent under
// activity retries (an existing document, or a duplicate key from a racing retry, is success).
func (s *Store) Accept(ctx context.Context, run *Run) error {
	now := s.now()
	run.CreatedAt, run.UpdatedAt, run.Seq = now, now, 0
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: run.TaskID}}, bson.D{{Key: "$setOnInsert", Value: run}},
		options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("record accepted task %s: %w", run.TaskID, err)
	}
	return nil
}

// Get loads one run.
func (s *Store) Get(ctx context.Context, taskID string) (*Run, error) {
	var r Run
	if err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: taskID}}).Decode(&r); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, fmt.Errorf("task %s: %w", taskID, ErrNotFound)
		}
		return nil, fmt.Errorf("load workflow_runs %s: %w", taskID, err)
	}
	r.Result = mongox.JSONMap(r.Result)
	return &r, nil
}

// GetMany loads the runs of ids (missing ones are absent from the map).
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]*Run, error) {
	out := make(map[string]*Run, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := s.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, fmt.Errorf("load workflow_runs: %w", err)
	}
	var runs []*Run
	if err := cur.All(ctx, &runs); err != nil {
		return nil, fmt.Errorf("read workflow_runs: %w", err)
	}
	for _, r := range runs {
		r.Result = mongox.JSONMap(r.Result)
		out[r.TaskID] = r
	}
	return out, nil
}

// StatusUpdate is one status change the workflow records.
type StatusUpdate struct {
	TaskID         string
	Seq            int
	Status         string
	Retry          Retry
	Attempts       int
	PipelineTaskID string
	Result         map[string]any
	LastError      string
	Reason         string
	At             time.Time
}

// Record applies u when it is newer than what is stored (Seq guard), so retries and reordering
// are harmless.
func (s *Store) Record(ctx context.Context, u StatusUpdate) error {
	set := bson.D{{Key: "status", Value: u.Status}, {Key: "retry", Value: u.Retry}, {Key: "attempts", Value: u.Attempts},
		{Key: "seq", Value: u.Seq}, {Key: "updated_at", Value: s.now()}, {Key: "last_error", Value: u.LastError}}
	if u.PipelineTaskID != "" {
		set = append(set, bson.E{Key: "pipeline_task_id", Value: u.PipelineTaskID})
	}
	if u.Result != nil {
		set = append(set, bson.E{Key: "result", Value: u.Result})
	}
	if u.Status == StatusSuspended {
		at := u.At.UTC()
		set = append(set, bson.E{Key: "suspended_reason", Value: u.Reason}, bson.E{Key: "suspended_at", Value: at})
	}
	if Terminal(u.Status) {
		at := u.At.UTC()
		set = append(set, bson.E{Key: "completed_at", Value: at})
	}
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: u.TaskID}, {Key: "seq", Value: bson.D{{Key: "$lt", Value: u.Seq}}}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("record %s for task %s: %w", u.Status, u.TaskID, err)
	}
	return nil
}

// MarkReplied stores the Telegram message id of the task's reply; it reports false when a reply
// was recorded before (the guard that keeps one task to one reply).
func (s *Store) MarkReplied(ctx context.Context, taskID string, messageID int64) (bool, error) {
	res, err := s.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: taskID}, {Key: "reply_message_id", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "reply_message_id", Value: messageID}, {Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return false, fmt.Errorf("record reply of task %s: %w", taskID, err)
	}
	return res.ModifiedCount == 1, nil
}
