package taskechodb

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// queueOpFilter selects the tasks op touches: the queue's live tasks (reset-error: in error).
func queueOpFilter(op queueop.Op) bson.M {
	f := bson.M{"project_id": op.ProjectID, "queue_id": op.QueueID, "deleted_at": nil}
	if op.Operation == queueop.ResetError {
		f["status"] = taskecho.StatusError
	}
	return f
}

// CountQueueOp counts the tasks op touches.
func (s *Store) CountQueueOp(ctx context.Context, op queueop.Op) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, queueOpFilter(op))
	return int(n), err
}

// QueueOpTasks reads the next limit tasks op touches after id after, in _id order.
func (s *Store) QueueOpTasks(ctx context.Context, op queueop.Op, after taskecho.ID, limit int) ([]*taskecho.Task, error) {
	f := queueOpFilter(op)
	f["_id"] = bson.M{"$gt": after}
	return s.findTasks(ctx, "tasks for "+op.Operation, f, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
}

// CountQueueOpApplied counts the tasks in (after, last] op has reset, by their pending_since stamp.
func (s *Store) CountQueueOpApplied(ctx context.Context, op queueop.Op, after, last taskecho.ID) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, bson.M{"project_id": op.ProjectID, "queue_id": op.QueueID, "deleted_at": nil,
		"pending_since": op.At, "_id": bson.M{"$gt": after, "$lte": last}})
	return int(n), err
}

// QueueOpPending reads the tasks among ids op touches and has not reset yet.
func (s *Store) QueueOpPending(ctx context.Context, op queueop.Op, ids []taskecho.ID) ([]*taskecho.Task, error) {
	in := make(bson.A, len(ids))
	for i, id := range ids {
		in[i] = id
	}
	f := queueOpFilter(op)
	f["_id"] = bson.M{"$in": in}
	f["pending_since"] = bson.M{"$ne": op.At}
	return s.findTasks(ctx, "contended tasks", f)
}
