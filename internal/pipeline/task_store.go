package pipeline

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/mongox"
)

// Task and step statuses of the seed.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusSuccess    = "success"
	StatusFailed     = "failed"
)

// Task is one pipeline_tasks document.
type Task struct {
	ID                string         `bson:"_id" json:"id"`
	UserID            string         `bson:"user_id" json:"user_id"`
	FeatureID         string         `bson:"feature_id" json:"feature_id"`
	Pipeline          string         `bson:"pipeline" json:"pipeline"`
	Version           string         `bson:"version" json:"version"`
	InputData         map[string]any `bson:"input_data" json:"input_data"`
	Status            string         `bson:"status" json:"status"`
	ErrorReason       string         `bson:"error_reason,omitempty" json:"error_reason"`
	EligibleForRefund bool           `bson:"eligible_for_refund" json:"eligible_for_refund"`
	Refunded          bool           `bson:"refunded" json:"refunded"`
	RefundedAt        *time.Time     `bson:"refunded_at,omitempty" json:"refunded_at,omitempty"`
	WorkflowID        string         `bson:"workflow_id" json:"workflow_id"`
	// RunID is the workflow run that admitted the task; RequestHash fingerprints the request
	// that created it (the Idempotency-Key check).
	RunID       string     `bson:"run_id,omitempty" json:"-"`
	RequestHash string     `bson:"request_hash,omitempty" json:"-"`
	CreatedAt   time.Time  `bson:"created_at" json:"created_at"`
	UpdatedAt   time.Time  `bson:"updated_at" json:"updated_at"`
	StartedAt   *time.Time `bson:"started_at,omitempty" json:"started_at"`
	CompletedAt *time.Time `bson:"completed_at,omitempty" json:"completed_at"`
}

// WorkflowID is the deterministic Temporal workflow ID of a task.
func WorkflowID(taskID string) string { return "pipeline-" + taskID }

// NewTaskID returns a fresh task id (an ObjectID in hex: sortable, URL- and field-name-safe).
func NewTaskID() string { return bson.NewObjectID().Hex() }

// ValidTaskID reports whether id has the shape NewTaskID and TaskIDForKey produce.
func ValidTaskID(id string) bool {
	_, err := bson.ObjectIDFromHex(id)
	return err == nil
}

// InsertTask records an admitted task as processing. The insert decides: when a task with the id
// exists already it is returned (existing) and nothing is written.
func (s *Store) InsertTask(ctx context.Context, t *Task) (existing *Task, err error) {
	now := s.now()
	t.Status, t.CreatedAt, t.UpdatedAt, t.StartedAt, t.WorkflowID = StatusProcessing, now, now, &now, WorkflowID(t.ID)
	_, err = s.c(CollTasks).InsertOne(ctx, t)
	if mongo.IsDuplicateKeyError(err) {
		return s.GetTask(ctx, t.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	return nil, nil
}

// DeleteTask removes a task its own workflow run recorded and then refused (no quota): guarded by
// the run id, so it never removes another run's task.
func (s *Store) DeleteTask(ctx context.Context, id, runID string) error {
	if _, err := s.c(CollTasks).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "run_id", Value: runID}}); err != nil {
		return fmt.Errorf("delete refused task %s: %w", id, err)
	}
	return nil
}

// GetTask loads one task.
func (s *Store) GetTask(ctx context.Context, id string) (*Task, error) {
	var t Task
	if err := s.c(CollTasks).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&t); err != nil {
		return nil, notFound(err, "pipeline task "+id)
	}
	t.InputData = mongox.JSONMap(t.InputData)
	return &t, nil
}

// FinishTask sets the final status once: a task already success/failed is left alone, so a retried
// activity cannot flip a result.
func (s *Store) FinishTask(ctx context.Context, id, status, reason string) error {
	now := s.now()
	set := bson.D{{Key: "status", Value: status}, {Key: "completed_at", Value: now}, {Key: "updated_at", Value: now}}
	if reason != "" {
		set = append(set, bson.E{Key: "error_reason", Value: reason})
	}
	_, err := s.c(CollTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{StatusPending, StatusProcessing}}}}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("finish task %s as %s: %w", id, status, err)
	}
	return nil
}

// MarkRefunded records on the task that its quota came back (the quota's open_tasks is the source
// of truth). Guarded by refunded: repeating it keeps the first refunded_at.
func (s *Store) MarkRefunded(ctx context.Context, id string) error {
	now := s.now()
	_, err := s.c(CollTasks).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "refunded", Value: false}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "refunded", Value: true}, {Key: "refunded_at", Value: now}, {Key: "updated_at", Value: now}}}})
	if err != nil {
		return fmt.Errorf("mark task %s refunded: %w", id, err)
	}
	return nil
}
