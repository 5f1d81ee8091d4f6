package pipelinedb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// Read-only queries of the operations console (api/ui). They only read; every write stays with
// the workflows.

// TaskFilter narrows the console's task list; empty fields match everything.
type TaskFilter struct {
	Status, Pipeline, UserID string
}

func (f TaskFilter) bson() bson.D {
	q := mongox.EqualIfSet(bson.D{}, "status", f.Status)
	q = mongox.EqualIfSet(q, "pipeline", f.Pipeline)
	return mongox.EqualIfSet(q, "user_id", f.UserID)
}

// ListTasks returns one page of tasks matching f, newest first (ids are ObjectIDs, so _id order
// is creation order), and how many match: two commands whatever the collection's size.
func (s *Store) ListTasks(ctx context.Context, f TaskFilter, skip, limit int64) ([]pipeline.Task, int64, error) {
	q := f.bson()
	total, err := s.c(CollTasks).CountDocuments(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("count pipeline tasks: %w", err)
	}
	cur, err := s.c(CollTasks).Find(ctx, q, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetSkip(skip).SetLimit(limit))
	if err != nil {
		return nil, 0, fmt.Errorf("list pipeline tasks: %w", err)
	}
	var out []pipeline.Task
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, fmt.Errorf("decode pipeline tasks: %w", err)
	}
	for i := range out {
		out[i].InputData = mongox.JSONMap(out[i].InputData)
	}
	return out, total, nil
}
