package pipelinedb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// StartRedrive reopens a failed task for redrive r: status processing, redrive_count+1, r appended
// to the history, the failure's error_reason, completed_at and refund flag cleared (the history
// keeps them). One update guarded by status failed and by r.ID not being in the history, so of
// concurrent or repeated redrives exactly one reopens the task; ok reports whether this call did.
func (s *Store) StartRedrive(ctx context.Context, taskID string, r pipeline.Redrive) (ok bool, err error) {
	res, err := s.c(CollTasks).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: taskID}, {Key: "status", Value: pipeline.StatusFailed},
			{Key: "redrives.id", Value: bson.D{{Key: "$ne", Value: r.ID}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: pipeline.StatusProcessing}, {Key: "refunded", Value: false},
			{Key: "updated_at", Value: r.At}}},
			{Key: "$unset", Value: bson.D{{Key: "error_reason", Value: ""}, {Key: "completed_at", Value: ""}, {Key: "refunded_at", Value: ""}}},
			{Key: "$inc", Value: bson.D{{Key: "redrive_count", Value: 1}}},
			{Key: "$push", Value: bson.D{{Key: "redrives", Value: r}}}})
	if err != nil {
		return false, fmt.Errorf("reopen task %s for redrive %s: %w", taskID, r.ID, err)
	}
	return res.ModifiedCount == 1, nil
}

// ResetSteps makes the steps from index `from` on pending again, forgetting the failed attempt
// (input, output, error, vendor job, callback state, invocation, providers tried), so the redrive
// runs them afresh. A succeeded step is never touched; repeating it changes nothing more.
func (s *Store) ResetSteps(ctx context.Context, taskID string, from int) error {
	_, err := s.c(CollSteps).UpdateMany(ctx,
		bson.D{{Key: "task_id", Value: taskID}, {Key: "step_index", Value: bson.D{{Key: "$gte", Value: from}}},
			{Key: "status", Value: bson.D{{Key: "$ne", Value: pipeline.StatusSuccess}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: pipeline.StatusPending}}},
			{Key: "$unset", Value: bson.D{{Key: "input", Value: ""}, {Key: "output", Value: ""}, {Key: "error_message", Value: ""},
				{Key: "started_at", Value: ""}, {Key: "completed_at", Value: ""}, {Key: "vendor_task_id", Value: ""},
				{Key: "callback_state", Value: ""}, {Key: "invoked_at", Value: ""}, {Key: "provider_ref", Value: ""},
				{Key: "providers_tried", Value: ""}}}})
	if err != nil {
		return fmt.Errorf("reset steps %d.. of task %s: %w", from, taskID, err)
	}
	return nil
}

// redriveFilter is the failed tasks f selects. The provider is the one the failed step last
// called (task_steps.provider_ref), read first as the set of those tasks' ids.
func (s *Store) redriveFilter(ctx context.Context, f pipeline.RedriveFilter) (bson.D, error) {
	d := bson.D{{Key: "status", Value: pipeline.StatusFailed}}
	d = mongox.EqualIfSet(d, "pipeline", f.Pipeline)
	d = mongox.EqualIfSet(d, "version", f.Version)
	d = mongox.EqualIfSet(d, "user_id", f.UserID)
	d = mongox.BetweenIfSet(d, "completed_at", f.FailedSince, f.FailedUntil)
	d = mongox.ContainsIfSet(d, "error_reason", f.Error)
	if f.Provider != "" {
		ids, err := s.failedOn(ctx, f.Provider)
		if err != nil {
			return nil, err
		}
		d = append(d, bson.E{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}})
	}
	return d, nil
}

// failedOn lists the tasks whose failed step last called provider.
func (s *Store) failedOn(ctx context.Context, provider string) (bson.A, error) {
	cur, err := s.c(CollSteps).Find(ctx, bson.D{{Key: "status", Value: pipeline.StatusFailed}, {Key: "provider_ref", Value: provider}},
		options.Find().SetProjection(bson.D{{Key: "task_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find steps failed on %s: %w", provider, err)
	}
	var rows []struct {
		TaskID string `bson:"task_id"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read steps failed on %s: %w", provider, err)
	}
	ids := make(bson.A, len(rows))
	for i, r := range rows {
		ids[i] = r.TaskID
	}
	return ids, nil
}

// CountRedrivable counts the failed tasks f selects and returns up to sample of their ids (a bulk
// redrive's dry run).
func (s *Store) CountRedrivable(ctx context.Context, f pipeline.RedriveFilter, sample int64) (int64, []string, error) {
	q, err := s.redriveFilter(ctx, f)
	if err != nil {
		return 0, nil, err
	}
	n, err := s.c(CollTasks).CountDocuments(ctx, q)
	if err != nil {
		return 0, nil, fmt.Errorf("count redrivable tasks: %w", err)
	}
	ids, err := s.taskIDs(ctx, q, sample)
	return n, ids, err
}

// RedriveBatch lists the next limit tasks of a bulk redrive after the id after, in _id order: the
// failed tasks f selects, and those the bulk's redrive id has redriven already (so a retried batch
// sees the tasks it reopened).
func (s *Store) RedriveBatch(ctx context.Context, f pipeline.RedriveFilter, redriveID, after string, limit int64) ([]string, error) {
	q, err := s.redriveFilter(ctx, f)
	if err != nil {
		return nil, err
	}
	q = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}},
		{Key: "$or", Value: bson.A{q, bson.D{{Key: "redrives.id", Value: redriveID}}}}}
	return s.taskIDs(ctx, q, limit)
}

func (s *Store) taskIDs(ctx context.Context, q bson.D, limit int64) ([]string, error) {
	cur, err := s.c(CollTasks).Find(ctx, q, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(limit).
		SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list redrivable tasks: %w", err)
	}
	var rows []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read redrivable tasks: %w", err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, nil
}
