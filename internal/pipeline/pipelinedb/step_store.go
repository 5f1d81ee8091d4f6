package pipelinedb

import (
	"context"
	"fmt"
	"strconv"
	"time"

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

// StepsOf returns a task's steps as clients see them: its rows, with the planned steps not
// reached yet as pending rows (pipeline.PlannedSteps). One find.
func (s *Store) StepsOf(ctx context.Context, t *pipeline.Task) ([]pipeline.StepRecord, error) {
	rows, err := s.ListSteps(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	return pipeline.PlannedSteps(t, rows), nil
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
// the first call only; a retry or a fall-through updates provider and input. A task admitted
// without pending step rows (docs/pipelines.md: the plan lives on the task) gets its row here:
// the first write upserts it, and a row that exists already (processing) fails that upsert with a
// duplicate key, which sends the write to the restart update.
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
		append(bson.D{{Key: "$set", Value: first}, {Key: "$setOnInsert", Value: stepOnInsert(taskID, index, now)}}, push...),
		options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("start step %d of task %s: %w", index, taskID, err)
	}
	if err == nil && (res.MatchedCount == 1 || res.UpsertedCount == 1) {
		return nil
	}
	_, err = s.c(CollSteps).UpdateOne(ctx, stepFilter(taskID, index, bson.E{Key: "status", Value: pipeline.StatusProcessing}),
		append(bson.D{{Key: "$set", Value: set}}, push...))
	if err != nil {
		return fmt.Errorf("restart step %d of task %s: %w", index, taskID, err)
	}
	return nil
}

// stepOnInsert are the fields of a step row its first write creates; step_name and step_type come
// from the task's plan when the row is read (pipeline.PlannedSteps).
func stepOnInsert(taskID string, index int, now time.Time) bson.D {
	return bson.D{{Key: "task_id", Value: taskID}, {Key: "step_index", Value: index}, {Key: "created_at", Value: now}}
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

// FinishStep sets a step's final status once (pending/processing → success/failed): one upsert
// guarded by the open statuses. A missing row (the plan lives on the task) is created finished; a
// finished row fails the upsert with a duplicate key, which is the guard holding.
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
	_, err := s.c(CollSteps).UpdateOne(ctx, openStep(taskID, index),
		bson.D{{Key: "$set", Value: set}, {Key: "$setOnInsert", Value: stepOnInsert(taskID, index, now)}}, options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("finish step %d of task %s as %s: %w", index, taskID, status, err)
	}
	return nil
}

func openStep(taskID string, index int) bson.D {
	return stepFilter(taskID, index, bson.E{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{pipeline.StatusPending, pipeline.StatusProcessing}}}})
}

// RecordStep records a finished sync step in one write: provider, input, output, started_at (when
// its call began), completed_at and the vendor calls it made (the health check's log, see
// RecentCalls). Guarded like FinishStep: only an open or missing row is written, so a retry after
// the write changes nothing.
func (s *Store) RecordStep(ctx context.Context, r pipeline.StepResult) error {
	now := s.now()
	set := bson.D{{Key: "status", Value: pipeline.StatusSuccess}, {Key: "provider_ref", Value: r.ProviderRef},
		{Key: "input", Value: r.Input}, {Key: "output", Value: r.Output}, {Key: "started_at", Value: r.StartedAt.UTC()},
		{Key: "completed_at", Value: now}}
	update := bson.D{{Key: "$set", Value: set}, {Key: "$setOnInsert", Value: stepOnInsert(r.TaskID, r.StepIndex, now)},
		{Key: "$addToSet", Value: bson.D{{Key: "providers_tried", Value: bson.D{{Key: "$each", Value: append(append([]string{}, r.Tried...), r.ProviderRef)}}}}}}
	if len(r.Calls) > 0 {
		update = append(update, bson.E{Key: "$push", Value: bson.D{{Key: "calls", Value: bson.D{{Key: "$each", Value: r.Calls}}}}})
	}
	_, err := s.c(CollSteps).UpdateOne(ctx, openStep(r.TaskID, r.StepIndex), update, options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("record step %d of task %s: %w", r.StepIndex, r.TaskID, err)
	}
	return nil
}
