package pipelinedb

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// InsertTask records an admitted task as processing. The insert decides: when a task with the id
// exists already it is returned (existing) and nothing is written.
func (s *Store) InsertTask(ctx context.Context, t *pipeline.Task) (existing *pipeline.Task, err error) {
	now := s.now()
	t.Status, t.CreatedAt, t.UpdatedAt, t.StartedAt, t.WorkflowID = pipeline.StatusProcessing, now, now, &now, pipeline.WorkflowID(t.ID)
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
func (s *Store) GetTask(ctx context.Context, id string) (*pipeline.Task, error) {
	var t pipeline.Task
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
		bson.D{{Key: "_id", Value: id}, {Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{pipeline.StatusPending, pipeline.StatusProcessing}}}}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("finish task %s as %s: %w", id, status, err)
	}
	return nil
}

// Follow reads the task and, while its record is not final, asks closed how its execution ended:
// when it ended from outside (terminated, timed out, canceled) the record follows — terminated,
// error_reason saying by whom and why — and the task is returned as now stored. Temporal not
// answering leaves the record as it is (the read still succeeds). This is the API's reconcile on
// read and the reconciler's fix for one task.
func (s *Store) Follow(ctx context.Context, id string, closed func(context.Context) (*closure.Closure, error)) (*pipeline.Task, error) {
	t, err := s.GetTask(ctx, id)
	if err != nil || t.Status == pipeline.StatusSuccess || t.Status == pipeline.StatusFailed || t.Status == pipeline.StatusTerminated {
		return t, err
	}
	cl, err := closed(ctx)
	if err != nil || cl == nil {
		return t, nil
	}
	if _, err := s.MarkTerminated(ctx, id, cl.Text(), cl.At); err != nil {
		return nil, err
	}
	return s.GetTask(ctx, id)
}

// MarkTerminated records that the task's execution ended from outside: one update guarded by a
// non-terminal status (pending, processing), so a task whose workflow recorded its end keeps it
// and a repeat (the API and the reconciler racing) changes nothing. changed reports the write.
func (s *Store) MarkTerminated(ctx context.Context, id, reason string, at time.Time) (changed bool, err error) {
	res, err := s.c(CollTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{pipeline.StatusPending, pipeline.StatusProcessing}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: pipeline.StatusTerminated}, {Key: "error_reason", Value: reason},
			{Key: "completed_at", Value: at.UTC()}, {Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return false, fmt.Errorf("mark task %s terminated: %w", id, err)
	}
	return res.ModifiedCount > 0, nil
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
