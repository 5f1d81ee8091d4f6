// Package crawldb is the crawl tasks' MongoDB store: the crawl_tasks collection, one document
// per original task, written by single-document conditional updates and read by the API and the
// operations console.
package crawldb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl"
)

// TasksCollection is where crawl task status lives, one document per original task
// (crawl.TaskRecord).
const TasksCollection = "crawl_tasks"

// Store reads and writes crawl_tasks. Every write is a single-document
// conditional update, so repeating one (an activity retry) is harmless.
type Store struct {
	coll *mongo.Collection
}

// New uses db's crawl_tasks collection.
func New(db *mongo.Database) *Store {
	return &Store{coll: db.Collection(TasksCollection)}
}

// MarkRunning creates the record or sets it Running for this run. A record
// already finished by this same run is left alone (a late activity retry).
func (s *Store) MarkRunning(ctx context.Context, id int64, source, workflowID, runID string, now time.Time) error {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "$nor", Value: bson.A{bson.D{
		{Key: "run_id", Value: runID}, {Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{crawl.Completed, crawl.Failed}}}},
	}}}}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "status", Value: crawl.Running}, {Key: "source", Value: source},
			{Key: "workflow_id", Value: workflowID}, {Key: "run_id", Value: runID}, {Key: "updated_at", Value: now}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "created_at", Value: now}, {Key: "processed_tweets", Value: int64(0)}}},
	}
	_, err := s.coll.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		return nil // finished by this run already: the filter excluded it and the upsert collided
	}
	if err != nil {
		return fmt.Errorf("mark crawl task %d running: %w", id, err)
	}
	return nil
}

// SaveCrawler records the crawler's exit status and last output lines.
func (s *Store) SaveCrawler(ctx context.Context, id int64, c crawl.CrawlerRecord, now time.Time) error {
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "crawler", Value: c}, {Key: "updated_at", Value: now}}}})
	if err != nil {
		return fmt.Errorf("save crawler outcome of crawl task %d: %w", id, err)
	}
	return nil
}

// Finish writes the final status once; a repeat finds the task finished and
// changes nothing, so finished_at stays the first one.
func (s *Store) Finish(ctx context.Context, id int64, f crawl.Finish, now time.Time) error {
	set := bson.D{{Key: "status", Value: f.Status}, {Key: "processed_tweets", Value: f.ProcessedTweets},
		{Key: "duplicate_tweets", Value: f.DuplicateTweets}, {Key: "dead_lettered_records", Value: f.DeadLetteredRecords},
		{Key: "updated_at", Value: now}, {Key: "finished_at", Value: now}}
	if f.TotalTweets >= 0 {
		set = append(set, bson.E{Key: "total_tweets", Value: f.TotalTweets})
	}
	if f.Status == crawl.Failed {
		set = append(set, bson.E{Key: "missing_tweets", Value: f.MissingTweets}, bson.E{Key: "failure_reason", Value: f.FailureReason})
	}
	_, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: crawl.Running}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("finish crawl task %d as %s: %w", id, f.Status, err)
	}
	return nil
}

// Follow reads the task and, while it runs by its record, asks closed how its workflow ended: when
// it ended from outside (terminated, timed out, canceled) the record follows — Terminated,
// failure_reason saying by whom and why — and the task is returned as now stored. Temporal not
// answering leaves the record as it is. This is the API's reconcile on read and the reconciler's
// fix for one task.
func (s *Store) Follow(ctx context.Context, id int64, closed func(context.Context) (*closure.Closure, error)) (crawl.TaskRecord, error) {
	t, err := s.Get(ctx, id)
	if err != nil || t.Finished() {
		return t, err
	}
	cl, err := closed(ctx)
	if err != nil || cl == nil {
		return t, nil
	}
	if _, err := s.MarkTerminated(ctx, id, cl.Text(), cl.At); err != nil {
		return crawl.TaskRecord{}, err
	}
	return s.Get(ctx, id)
}

// MarkTerminated records that the task's workflow was ended from outside: one update guarded by
// status Running, so a finished task keeps its end and a repeat changes nothing. changed reports
// the write.
func (s *Store) MarkTerminated(ctx context.Context, id int64, reason string, at time.Time) (changed bool, err error) {
	res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: crawl.Running}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: crawl.Terminated}, {Key: "failure_reason", Value: reason},
			{Key: "updated_at", Value: at.UTC()}, {Key: "finished_at", Value: at.UTC()}}}})
	if err != nil {
		return false, fmt.Errorf("mark crawl task %d terminated: %w", id, err)
	}
	return res.ModifiedCount > 0, nil
}

// Get reads one task; crawl.ErrTaskNotFound when there is none.
func (s *Store) Get(ctx context.Context, id int64) (crawl.TaskRecord, error) {
	var t crawl.TaskRecord
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&t)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return crawl.TaskRecord{}, fmt.Errorf("crawl task %d: %w", id, crawl.ErrTaskNotFound)
	}
	if err != nil {
		return crawl.TaskRecord{}, fmt.Errorf("read crawl task %d: %w", id, err)
	}
	return t, nil
}
