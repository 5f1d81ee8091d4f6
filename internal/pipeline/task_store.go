package pipeline

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

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
	WorkflowID        string         `bson:"workflow_id" json:"workflow_id"`
	CreatedAt         time.Time      `bson:"created_at" json:"created_at"`
	UpdatedAt         time.Time      `bson:"updated_at" json:"updated_at"`
	StartedAt         *time.Time     `bson:"started_at,omitempty" json:"started_at"`
	CompletedAt       *time.Time     `bson:"completed_at,omitempty" json:"completed_at"`
}

// WorkflowID is the deterministic Temporal workflow ID of a task.
func WorkflowID(taskID string) string { return "pipeline-" + taskID }

// NewTaskID returns a fresh task id (an ObjectID in hex: sortable, URL- and field-name-safe).
func NewTaskID() string { return bson.NewObjectID().Hex() }

// ValidTaskID reports whether id has the shape NewTaskID produces. Quota ledger keys are task ids,
// so nothing else may reach a field path.
func ValidTaskID(id string) bool {
	_, err := bson.ObjectIDFromHex(id)
	return err == nil
}

// CreateTask inserts a pending task.
func (s *Store) CreateTask(ctx context.Context, t *Task) error {
	now := s.now()
	t.Status, t.CreatedAt, t.UpdatedAt, t.WorkflowID = StatusPending, now, now, WorkflowID(t.ID)
	if _, err := s.c(CollTasks).InsertOne(ctx, t); err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
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

// MarkTaskProcessing moves pending → processing; repeating it changes nothing.
func (s *Store) MarkTaskProcessing(ctx context.Context, id string) error {
	now := s.now()
	_, err := s.c(CollTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "status", Value: StatusPending}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: StatusProcessing}, {Key: "started_at", Value: now}, {Key: "updated_at", Value: now}}}})
	if err != nil {
		return fmt.Errorf("mark task %s processing: %w", id, err)
	}
	return nil
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

// MarkRefunded records on the task that its quota came back (the ledger is the source of truth).
func (s *Store) MarkRefunded(ctx context.Context, id string) error {
	_, err := s.c(CollTasks).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "refunded", Value: true}, {Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return fmt.Errorf("mark task %s refunded: %w", id, err)
	}
	return nil
}
