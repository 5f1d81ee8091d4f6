package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
)

// The series' other subsystems at each size: size finished entry tasks (workflow_runs) and size
// finished crawl tasks (crawl_tasks), written as their workflows leave them. Temporal's
// visibility store is not loaded: the entry stats and suspended list count and list what
// visibility holds (the run's own executions), so their rows measure taskloom's side of them —
// the visibility calls and the workflow_runs reads around them — not visibility at size.

// entryKey is the idempotency key of loaded entry task i; its task id is entry.TaskID of it.
func (p scaleProject) entryKey(i int) string { return fmt.Sprintf("scale-%s-%07d", p.id, i) }

// crawlID is the original_task_id of loaded crawl task i: past any id a test or the bench's
// crawl scenario uses.
func (p scaleProject) crawlID(i int) int64 { return p.crawlBase + int64(i) }

// newCrawlBase picks where a project's crawl ids start (9e15 onwards, a fresh range per project).
func newCrawlBase() int64 { return 9_000_000_000_000_000 + int64(rand.Uint32())*1_000_000 }

// loadScaleReads writes the project's entry and crawl tasks.
func loadScaleReads(ctx context.Context, db *mongo.Database, p scaleProject, created time.Time) error {
	if err := insertAll(ctx, db.Collection(entrydb.CollRuns), p.size, func(i int) []any {
		return []any{scaleEntryRun(p, i, created.Add(time.Duration(i)*time.Minute))}
	}); err != nil {
		return err
	}
	return insertAll(ctx, db.Collection(crawldb.TasksCollection), p.size, func(i int) []any {
		return []any{scaleCrawlTask(p, i, created.Add(time.Duration(i)*time.Minute))}
	})
}

// scaleEntryRun is entry task i of p: completed over HTTP, with its pipeline task's result.
func scaleEntryRun(p scaleProject, i int, at time.Time) *entry.Run {
	done := at.Add(40 * time.Second)
	key := p.entryKey(i)
	return &entry.Run{TaskID: entry.TaskID(key), IdempotencyKey: key, WorkflowID: "scale-pipe", WorkflowVersion: "v1",
		Channel: entry.ChannelHTTP, Source: "bench-scale", Owner: "scale-owner", Status: entry.StatusCompleted,
		Attempts: 1, PipelineTaskID: p.pipelineTaskID(i), Result: map[string]any{"url": "https://example.test/" + key},
		Seq: 4, CreatedAt: at, UpdatedAt: done, CompletedAt: &done}
}

// scaleCrawlTask is crawl task i of p: completed, every tweet counted.
func scaleCrawlTask(p scaleProject, i int, at time.Time) *crawl.TaskRecord {
	done := at.Add(5 * time.Minute)
	total, missing := int64(200), int64(0)
	id := p.crawlID(i)
	return &crawl.TaskRecord{OriginalTaskID: id, Status: crawl.Completed, Source: crawl.SourceAPI,
		WorkflowID: fmt.Sprintf("crawl-%d", id), RunID: fmt.Sprintf("run-%d", id), TotalTweets: &total, ProcessedTweets: total,
		MissingTweets: &missing, Crawler: &crawl.CrawlerRecord{Command: []string{"crawler", "--task", fmt.Sprint(id)},
			LastLines: []string{"done"}, Lines: 1200, DurationMS: 290_000, FinishedAt: done},
		CreatedAt: at, UpdatedAt: done, FinishedAt: &done}
}

// dropScaleReads removes what loadScaleReads wrote.
func dropScaleReads(ctx context.Context, db *mongo.Database, p scaleProject) error {
	keys := bson.D{{Key: "$gte", Value: p.entryKey(0)}, {Key: "$lte", Value: p.entryKey(p.size)}}
	if _, err := db.Collection(entrydb.CollRuns).DeleteMany(ctx, bson.D{{Key: "idempotency_key", Value: keys}}); err != nil {
		return fmt.Errorf("drop entry tasks of %s: %w", p.id, err)
	}
	ids := bson.D{{Key: "$gte", Value: p.crawlID(0)}, {Key: "$lt", Value: p.crawlID(p.size)}}
	if _, err := db.Collection(crawldb.TasksCollection).DeleteMany(ctx, bson.D{{Key: "_id", Value: ids}}); err != nil {
		return fmt.Errorf("drop crawl tasks of %s: %w", p.id, err)
	}
	return nil
}

// getEntryTask is GET /api/workflows/tasks/{task_id} of a finished entry task: Temporal's describe (a task
// past retention is unknown there) and its workflow_runs document.
func getEntryTask(ctx context.Context, d scaleDeps, p scaleProject, i int) error {
	id := entry.TaskID(p.entryKey(i * scaleStride % p.size))
	st, err := d.entry.Status(ctx, id)
	if err == nil && st.Status != entry.StatusCompleted {
		err = fmt.Errorf("entry task %s is %s, want %s", id, st.Status, entry.StatusCompleted)
	}
	return err
}

// entryConsolePage is what the console's entry page reads (api/ui entryPage): the stats, the
// suspended list and, when replies failed, the failed replies.
func entryConsolePage(ctx context.Context, d scaleDeps) error {
	st, err := d.entry.Stats(ctx, 0)
	if err != nil {
		return err
	}
	if _, err := d.entry.Suspended(ctx, entryListShown); err != nil {
		return err
	}
	if st.Replies.Failed > 0 {
		_, err = d.entry.FailedReplies(ctx, entryListShown)
	}
	return err
}

// entryListShown is the console's and GET /internal/tasks/suspended's default list length.
const entryListShown = 100

// readCrawlProgress is GET /api/v1/crawl-tasks/{id} of a finished task: its crawl_tasks
// document (a finished one asks Temporal nothing) and its progress hash.
func readCrawlProgress(ctx context.Context, d scaleDeps, p scaleProject, i int) error {
	id := p.crawlID(i * scaleStride % p.size)
	t, err := d.crawl.Follow(ctx, id, func(context.Context) (*closure.Closure, error) {
		return nil, errors.New("a finished crawl task's GET asked Temporal")
	})
	if err != nil {
		return err
	}
	if !t.Finished() {
		return fmt.Errorf("crawl task %d is %s, want finished", id, t.Status)
	}
	_, err = d.progress.Get(ctx, id)
	return err
}
