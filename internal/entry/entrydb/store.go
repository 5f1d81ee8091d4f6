// Package entrydb is the MongoDB store of the entry subsystem: workflow_runs, one document per
// idempotency key, written by EntryTaskWorkflow's activities (guarded by the task id, the status
// sequence number and the reply's progress) and read by the intake and the operator views.
package entrydb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/mongox"
)

// CollRuns is the workflow_runs collection: one document per idempotency key.
const CollRuns = "workflow_runs"

// errNotFound is what a lookup that finds no document returns: the domain's ErrNotFound, which
// callers test for, wrapping the driver's ErrNoDocuments, which the HTTP layer's store mapping
// answers with 404.
var errNotFound = fmt.Errorf("%w: %w", entry.ErrNotFound, mongo.ErrNoDocuments)

// Store is workflow_runs. Every write is a single-document insert or guarded update.
type Store struct {
	coll *mongo.Collection
	now  func() time.Time
}

// New wraps db.
func New(db *mongo.Database) *Store {
	return &Store{coll: db.Collection(CollRuns), now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

// EnsureIndexes creates the unique idempotency-key index (no two workflow_runs documents for one
// key) and the status index the ops listing uses.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.coll,
		mongo.IndexModel{Keys: bson.D{{Key: "idempotency_key", Value: 1}}, Options: options.Index().SetUnique(true)},
		mongo.IndexModel{Keys: bson.D{{Key: "status", Value: 1}}})
}

// Accept records an accepted task: it inserts run unless a document with its _id (the task id,
// derived from the idempotency key) exists, and returns that existing document (nil when it
// inserted). EntryTaskWorkflow calls it first, through an activity, so the document exists
// exactly when the workflow does; run may already carry the first run's status (entry.StartedRun),
// its sequence number included. One command, and idempotent under activity retries: a retry
// finds the document its earlier attempt wrote, and a duplicate key from a racing upsert (which
// MongoDB may report for two concurrent upserts on one key) is answered by reading the winner's.
func (s *Store) Accept(ctx context.Context, run *entry.Run) (*entry.Run, error) {
	now := s.now()
	run.CreatedAt, run.UpdatedAt = now, now
	var prev entry.Run
	err := s.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: run.TaskID}}, bson.D{{Key: "$setOnInsert", Value: run}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)).Decode(&prev)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, nil
	case mongo.IsDuplicateKeyError(err):
		return s.Get(ctx, run.TaskID)
	case err != nil:
		return nil, fmt.Errorf("record accepted task %s: %w", run.TaskID, err)
	}
	prev.Result = mongox.JSONMap(prev.Result)
	return &prev, nil
}

// Get loads one run.
func (s *Store) Get(ctx context.Context, taskID string) (*entry.Run, error) {
	var r entry.Run
	if err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: taskID}}).Decode(&r); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, fmt.Errorf("task %s: %w", taskID, errNotFound)
		}
		return nil, fmt.Errorf("load workflow_runs %s: %w", taskID, err)
	}
	r.Result = mongox.JSONMap(r.Result)
	return &r, nil
}

// GetMany loads the runs of ids (missing ones are absent from the map).
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]*entry.Run, error) {
	out := make(map[string]*entry.Run, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := s.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, fmt.Errorf("load workflow_runs: %w", err)
	}
	var runs []*entry.Run
	if err := cur.All(ctx, &runs); err != nil {
		return nil, fmt.Errorf("read workflow_runs: %w", err)
	}
	for _, r := range runs {
		r.Result = mongox.JSONMap(r.Result)
		out[r.TaskID] = r
	}
	return out, nil
}

// Record applies u when it is newer than what is stored (Seq guard), so retries and reordering
// are harmless.
func (s *Store) Record(ctx context.Context, u entry.StatusUpdate) error {
	set := bson.D{{Key: "status", Value: u.Status}, {Key: "retry", Value: u.Retry}, {Key: "attempts", Value: u.Attempts},
		{Key: "seq", Value: u.Seq}, {Key: "updated_at", Value: s.now()}, {Key: "last_error", Value: u.LastError}}
	if u.PipelineTaskID != "" {
		set = append(set, bson.E{Key: "pipeline_task_id", Value: u.PipelineTaskID})
	}
	if u.Result != nil {
		set = append(set, bson.E{Key: "result", Value: u.Result})
	}
	if u.Status == entry.StatusSuspended {
		at := u.At.UTC()
		set = append(set, bson.E{Key: "suspended_reason", Value: u.Reason}, bson.E{Key: "suspended_at", Value: at})
		if u.AutoDropAt != nil {
			set = append(set, bson.E{Key: "auto_drop_at", Value: u.AutoDropAt.UTC()})
		}
	}
	if u.Status == entry.StatusDropped && u.AutoDropped {
		set = append(set, bson.E{Key: "drop_reason", Value: u.Reason}, bson.E{Key: "auto_dropped", Value: true})
	}
	if entry.Terminal(u.Status) {
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

// MarkTerminated records that the task's execution ended from outside: one update guarded by a
// non-terminal status, so a task whose workflow recorded its end keeps it and a repeat changes
// nothing. changed reports the write.
func (s *Store) MarkTerminated(ctx context.Context, taskID, reason string, at time.Time) (changed bool, err error) {
	res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: taskID}, {Key: "status", Value: bson.D{{Key: "$nin", Value: bson.A{
		entry.StatusCompleted, entry.StatusDropped, entry.StatusFailed, entry.StatusTerminated}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: entry.StatusTerminated}, {Key: "last_error", Value: reason},
			{Key: "completed_at", Value: at.UTC()}, {Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return false, fmt.Errorf("mark task %s terminated: %w", taskID, err)
	}
	return res.ModifiedCount > 0, nil
}

// CountAutoDropped counts the tasks the auto-drop ended (ENTRY_SUSPENDED_DROP_AFTER): one count
// over the status index (status dropped, then the auto_dropped flag).
func (s *Store) CountAutoDropped(ctx context.Context) (int64, error) {
	n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "status", Value: entry.StatusDropped}, {Key: "auto_dropped", Value: true}})
	if err != nil {
		return 0, fmt.Errorf("count auto-dropped tasks: %w", err)
	}
	return n, nil
}

// RecordReplyPart records that part r.Sent-1 of the task's reply went out as message
// r.MessageIDs[r.Sent-1]: one guarded update that applies only over the progress before that
// part (reply.sent = r.Sent-1, missing for the first), so parts are recorded once and in order.
// The first part's id also goes to reply_message_id, the field replies were guarded by before
// they were split. It reports false when the stored progress is not the one before this part.
func (s *Store) RecordReplyPart(ctx context.Context, taskID string, r entry.Reply) (bool, error) {
	if r.Sent < 1 || len(r.MessageIDs) != r.Sent {
		return false, fmt.Errorf("record reply part of task %s: progress %d with %d message ids", taskID, r.Sent, len(r.MessageIDs))
	}
	id := r.MessageIDs[r.Sent-1]
	var before any = r.Sent - 1
	set := bson.D{{Key: "reply.status", Value: r.Status}, {Key: "reply.parts", Value: r.Parts}, {Key: "reply.sent", Value: r.Sent},
		{Key: "reply.at", Value: r.At.UTC()}, {Key: "updated_at", Value: s.now()}}
	if r.Sent == 1 {
		before = nil // matches a document with no reply yet
		set = append(set, bson.E{Key: "reply_message_id", Value: id})
	}
	res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: taskID}, {Key: "reply.sent", Value: before}},
		bson.D{{Key: "$set", Value: set}, {Key: "$push", Value: bson.D{{Key: "reply.message_ids", Value: id}}}})
	if err != nil {
		return false, fmt.Errorf("record reply part %d of task %s: %w", r.Sent, taskID, err)
	}
	return res.ModifiedCount == 1, nil
}

// RecordReplyFailure records a reply given up, keeping the parts that went out before.
// Idempotent: the same failure written twice leaves the same document.
func (s *Store) RecordReplyFailure(ctx context.Context, f entry.ReplyFailure) error {
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: f.TaskID}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "reply.status", Value: entry.ReplyFailed}, {Key: "reply.error", Value: f.Error}, {Key: "reply.at", Value: f.At.UTC()},
		{Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return fmt.Errorf("record failed reply of task %s: %w", f.TaskID, err)
	}
	return nil
}

// bulkQuery is the suspended tasks of f with a task id after after ("" for all).
func bulkQuery(f entry.BulkFilter, after string) bson.D {
	q := bson.D{{Key: "status", Value: entry.StatusSuspended}}
	if after != "" {
		q = append(q, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}})
	}
	q = mongox.EqualIfSet(q, "workflow_id", f.WorkflowID)
	q = mongox.EqualIfSet(q, "channel", f.Channel)
	q = mongox.EqualIfSet(q, "chat_id", f.ChatID)
	q = mongox.BetweenIfSet(q, "suspended_at", f.SuspendedSince, f.SuspendedUntil)
	return mongox.ContainsIfSet(q, "suspended_reason", f.Reason)
}

// CountSuspended counts the suspended tasks of f and returns up to sample of their ids.
func (s *Store) CountSuspended(ctx context.Context, f entry.BulkFilter, sample int) (int64, []string, error) {
	q := bulkQuery(f, "")
	n, err := s.coll.CountDocuments(ctx, q)
	if err != nil {
		return 0, nil, fmt.Errorf("count suspended tasks: %w", err)
	}
	ids, err := s.SuspendedPage(ctx, f, "", sample)
	return n, ids, err
}

// SuspendedPage lists up to limit ids of suspended tasks of f after after, in id order.
func (s *Store) SuspendedPage(ctx context.Context, f entry.BulkFilter, after string, limit int) ([]string, error) {
	cur, err := s.coll.Find(ctx, bulkQuery(f, after), options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).
		SetLimit(int64(limit)).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list suspended tasks: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read suspended tasks: %w", err)
	}
	ids := make([]string, 0, len(docs))
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	return ids, nil
}
