package taskechodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// Task reads the task ref names: by its key when the queue is named or only the project-level
// task will do; with AnyQueue the project-level task by its key first, else the first queue's
// task of that id in queue_id order. The key is the tasks' unique index, so the read that nearly
// every project-wide call makes (the task lives at project level) is a point lookup.
func (s *Store) Task(ctx context.Context, ref taskecho.TaskRef, includeDeleted bool) (*taskecho.Task, error) {
	byKey := bson.M{"key": taskecho.TaskKey(ref.ProjectID, ref.QueueID, ref.TaskID)}
	t, err := s.findOneTask(ctx, live(byKey, includeDeleted))
	if t != nil || err != nil || ref.QueueID != nil || !ref.AnyQueue {
		return t, err
	}
	// A project-level task shadows the queues' tasks of the same id, and there is none.
	anyQueue := bson.M{"project_id": ref.ProjectID, "task_id": ref.TaskID}
	return s.findOneTask(ctx, live(anyQueue, includeDeleted), options.FindOne().SetSort(bson.D{{Key: "queue_id", Value: 1}}))
}

// live narrows f to tasks that are not soft-deleted, unless includeDeleted.
func live(f bson.M, includeDeleted bool) bson.M {
	if !includeDeleted {
		f["deleted_at"] = nil
	}
	return f
}

// findOneTask reads the first task f matches, or nil.
func (s *Store) findOneTask(ctx context.Context, f bson.M, opts ...options.Lister[options.FindOneOptions]) (*taskecho.Task, error) {
	var t taskecho.Task
	err := s.tasks.FindOne(ctx, f, opts...).Decode(&t)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// findTasks reads every task matching filter; what names them in errors.
func (s *Store) findTasks(ctx context.Context, what string, filter any, opts ...options.Lister[options.FindOptions]) ([]*taskecho.Task, error) {
	cur, err := s.tasks.Find(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	var out []*taskecho.Task
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// ListedTasks reads the live tasks of project whose task_id is among ids, in every queue.
func (s *Store) ListedTasks(ctx context.Context, projectID string, ids []string) ([]*taskecho.Task, error) {
	return s.findTasks(ctx, "listed tasks", bson.M{"project_id": projectID, "task_id": bson.M{"$in": ids}, "deleted_at": nil})
}

// LeaseTasks reads the tasks of project that hold lease leaseID and are not deleted (a deleted
// task keeps its lease, but a call naming it answers 404).
func (s *Store) LeaseTasks(ctx context.Context, projectID, leaseID string) ([]*taskecho.Task, error) {
	return s.findTasks(ctx, "leased tasks", bson.M{"lease_id": leaseID, "project_id": projectID, "deleted_at": nil})
}

// QueueTasks reads every task of a queue, deleted ones included.
func (s *Store) QueueTasks(ctx context.Context, projectID, queueID string) ([]*taskecho.Task, error) {
	return s.findTasks(ctx, "queue tasks", bson.M{"project_id": projectID, "queue_id": queueID})
}

// pullableFilter is the query of tasks f may claim at now: server tasks of f's scope (one queue,
// or the project level: queue_id null), not deleted, not archived or expired, not pulled or under
// an expired lease, matching every filter.
func pullableFilter(f taskecho.PullFilter, now time.Time) bson.M {
	q := bson.M{"project_id": f.ProjectID, "queue_id": nil, "source": taskecho.SourceServer, "deleted_at": nil, "archived_at": nil}
	if f.QueueID != nil {
		q["queue_id"] = *f.QueueID
	}
	and := bson.A{
		bson.M{"$or": bson.A{bson.M{"expires_at": nil}, bson.M{"expires_at": bson.M{"$gt": now}}}},
		// Never pulled (or released), or leased but past its expiry. A confirmed task keeps
		// pulled_at and has no lease_expires_at, so it matches neither.
		bson.M{"$or": bson.A{bson.M{"pulled_at": nil}, bson.M{"lease_expires_at": bson.M{"$lte": now}}}},
	}
	if len(f.Statuses) > 0 {
		q["status"] = bson.M{"$in": f.Statuses}
	}
	if len(f.Tags) > 0 {
		q["tags"] = bson.M{"$in": f.Tags}
	}
	if r := timeRange(f.CreatedAfter, f.CreatedBefore); r != nil {
		q["created_at"] = r
	}
	if r := timeRange(f.ModifiedAfter, f.ModifiedBefore); r != nil {
		q["server_modified_at"] = r
	}
	if f.Priority != nil {
		q["priority"] = f.Priority
	}
	if len(f.TaskIDs) > 0 {
		q["task_id"] = bson.M{"$in": f.TaskIDs}
	}
	q["$and"] = and
	return q
}

func timeRange(after, before *time.Time) bson.M {
	if after == nil && before == nil {
		return nil
	}
	r := bson.M{}
	if after != nil {
		r["$gte"] = *after
	}
	if before != nil {
		r["$lte"] = *before
	}
	return r
}

// pullOrder is highest priority first, then oldest; _id breaks ties so the order is total. The
// pull_scope_order index serves it after the scope's equalities.
var pullOrder = bson.D{{Key: "priority_rank", Value: -1}, {Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}

// PullCandidates reads up to window tasks f may claim at now, in pull order.
func (s *Store) PullCandidates(ctx context.Context, f taskecho.PullFilter, now time.Time, window int) ([]*taskecho.Task, error) {
	// The whole read is one find: past 101 documents the server's default first batch would
	// cost a getMore as well, and a batch size equal to the limit leaves the cursor open after
	// the last document, which costs the driver one more command to find it exhausted (the
	// drivers' guidance of DRIVERS-1447: send a batch size above the limit, and the server
	// closes the cursor once the limit is reached).
	return s.findTasks(ctx, "pull candidates", pullableFilter(f, now),
		options.Find().SetSort(pullOrder).SetLimit(int64(window)).SetBatchSize(int32(window)+1))
}

// ExpiredLeases reads up to limit tasks whose lease expired by now, oldest expiry first.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*taskecho.Task, error) {
	return s.findTasks(ctx, "expired leases", bson.M{"lease_expires_at": bson.M{"$lte": now}},
		options.Find().SetSort(bson.D{{Key: "lease_expires_at", Value: 1}}).SetLimit(int64(limit)))
}

// CountExpiredLeases counts the tasks whose lease expired by now.
func (s *Store) CountExpiredLeases(ctx context.Context, now time.Time) (int, error) {
	n, err := s.tasks.CountDocuments(ctx, bson.M{"lease_expires_at": bson.M{"$lte": now}})
	return int(n), err
}

// ExpiredTasks reads up to limit live, unleased, unarchived server tasks past expires_at.
func (s *Store) ExpiredTasks(ctx context.Context, now time.Time, limit int) ([]*taskecho.Task, error) {
	f := bson.M{"expires_at": bson.M{"$lte": now}, "source": taskecho.SourceServer, "deleted_at": nil, "archived_at": nil, "lease_id": nil}
	return s.findTasks(ctx, "expired tasks", f, options.Find().SetSort(bson.D{{Key: "expires_at", Value: 1}}).SetLimit(int64(limit)))
}
