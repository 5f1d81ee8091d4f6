package pipelinedb

import (
	"context"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

func stepID(taskID string, index int) string { return taskID + ":" + strconv.Itoa(index) }

func stepFilter(taskID string, index int, extra ...bson.E) bson.D {
	return append(bson.D{{Key: "_id", Value: stepID(taskID, index)}}, extra...)
}

// CreateSteps inserts one pending row per schema step so a client sees the whole plan at once.
func (s *Store) CreateSteps(ctx context.Context, taskID string, steps []pipeline.Step) error {
	now := s.now()
	docs := make([]any, len(steps))
	for i, st := range steps {
		docs[i] = pipeline.StepRecord{ID: stepID(taskID, i), TaskID: taskID, StepIndex: i, StepName: st.Name, StepType: st.Type,
			Status: pipeline.StatusPending, CreatedAt: now}
	}
	if _, err := s.c(CollSteps).InsertMany(ctx, docs); err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("insert steps of task %s: %w", taskID, err)
	}
	return nil
}

// ListSteps returns a task's steps in order.
func (s *Store) ListSteps(ctx context.Context, taskID string) ([]pipeline.StepRecord, error) {
	cur, err := s.c(CollSteps).Find(ctx, bson.D{{Key: "task_id", Value: taskID}},
		options.Find().SetSort(bson.D{{Key: "step_index", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list steps of task %s: %w", taskID, err)
	}
	var out []pipeline.StepRecord
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read steps of task %s: %w", taskID, err)
	}
	for i := range out {
		out[i].Input, out[i].Output = mongox.JSONMap(out[i].Input), mongox.JSONMap(out[i].Output)
	}
	return out, nil
}

// GetStep loads one step.
func (s *Store) GetStep(ctx context.Context, taskID string, index int) (*pipeline.StepRecord, error) {
	var r pipeline.StepRecord
	if err := s.c(CollSteps).FindOne(ctx, stepFilter(taskID, index)).Decode(&r); err != nil {
		return nil, notFound(err, fmt.Sprintf("step %d of task %s", index, taskID))
	}
	r.Input, r.Output = mongox.JSONMap(r.Input), mongox.JSONMap(r.Output)
	return &r, nil
}

// StartStep records that a provider is being called with the rendered input. started_at is set by
// the first call only; a retry or a fall-through updates provider and input.
func (s *Store) StartStep(ctx context.Context, taskID string, index int, providerRef string, input map[string]any) error {
	now := s.now()
	set := bson.D{{Key: "status", Value: pipeline.StatusProcessing}, {Key: "input", Value: input}}
	if providerRef != "" {
		set = append(set, bson.E{Key: "provider_ref", Value: providerRef})
	}
	push := bson.D{}
	if providerRef != "" {
		push = bson.D{{Key: "$addToSet", Value: bson.D{{Key: "providers_tried", Value: providerRef}}}}
	}
	first := append(append(bson.D{}, set...), bson.E{Key: "started_at", Value: now})
	res, err := s.c(CollSteps).UpdateOne(ctx, stepFilter(taskID, index, bson.E{Key: "status", Value: pipeline.StatusPending}),
		append(bson.D{{Key: "$set", Value: first}}, push...))
	if err != nil {
		return fmt.Errorf("start step %d of task %s: %w", index, taskID, err)
	}
	if res.MatchedCount == 1 {
		return nil
	}
	_, err = s.c(CollSteps).UpdateOne(ctx, stepFilter(taskID, index, bson.E{Key: "status", Value: pipeline.StatusProcessing}),
		append(bson.D{{Key: "$set", Value: set}}, push...))
	if err != nil {
		return fmt.Errorf("restart step %d of task %s: %w", index, taskID, err)
	}
	return nil
}

// SetVendorTask remembers the vendor's job id of an async step, the guard that stops a retried
// submit activity from creating a second vendor job.
func (s *Store) SetVendorTask(ctx context.Context, taskID string, index int, providerRef, vendorTaskID string) error {
	_, err := s.c(CollSteps).UpdateOne(ctx, stepFilter(taskID, index),
		bson.D{{Key: "$set", Value: bson.D{{Key: "vendor_task_id", Value: vendorTaskID}, {Key: "provider_ref", Value: providerRef}}}})
	if err != nil {
		return fmt.Errorf("store vendor task of step %d of task %s: %w", index, taskID, err)
	}
	return nil
}

// AwaitCallback opens the step for its SCF callback (before the function is invoked, so an
// immediate callback is not refused).
func (s *Store) AwaitCallback(ctx context.Context, taskID string, index int) error {
	_, err := s.c(CollSteps).UpdateOne(ctx,
		stepFilter(taskID, index, bson.E{Key: "status", Value: pipeline.StatusProcessing}, bson.E{Key: "callback_state", Value: bson.D{{Key: "$exists", Value: false}}}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "callback_state", Value: pipeline.CallbackWaiting}}}})
	if err != nil {
		return fmt.Errorf("open callback of step %d of task %s: %w", index, taskID, err)
	}
	return nil
}

// MarkInvoked records a successful SCF invocation so a retried activity does not invoke twice.
func (s *Store) MarkInvoked(ctx context.Context, taskID string, index int) error {
	_, err := s.c(CollSteps).UpdateOne(ctx, stepFilter(taskID, index),
		bson.D{{Key: "$set", Value: bson.D{{Key: "invoked_at", Value: s.now()}}}})
	if err != nil {
		return fmt.Errorf("mark step %d of task %s invoked: %w", index, taskID, err)
	}
	return nil
}

// FinishStep sets a step's final status once (pending/processing → success/failed).
func (s *Store) FinishStep(ctx context.Context, taskID string, index int, status, providerRef string, output map[string]any, errMsg string) error {
	now := s.now()
	set := bson.D{{Key: "status", Value: status}, {Key: "completed_at", Value: now}}
	if providerRef != "" {
		set = append(set, bson.E{Key: "provider_ref", Value: providerRef})
	}
	if output != nil {
		set = append(set, bson.E{Key: "output", Value: output})
	}
	if errMsg != "" {
		set = append(set, bson.E{Key: "error_message", Value: errMsg})
	}
	_, err := s.c(CollSteps).UpdateOne(ctx,
		stepFilter(taskID, index, bson.E{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{pipeline.StatusPending, pipeline.StatusProcessing}}}}),
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("finish step %d of task %s as %s: %w", index, taskID, status, err)
	}
	return nil
}
