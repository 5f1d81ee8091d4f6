// Package crawl holds the crawl subsystem's activities: crawl_tasks writes,
// the crawler run and the progress close at the deadline. Each is idempotent
// (see its comment). Their names carry the Crawl prefix, so that no other
// subsystem's activity can take the same name on the shared task queue.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawler"
)

// Non-retryable error types a workflow or test can assert.
const (
	ErrTypeCrawlerNotConfigured = "CrawlerNotConfigured"
	ErrTypeCrawlerStart         = "CrawlerStartFailed"
)

// TaskStore is the crawl_tasks writes the activities make; *crawldb.Store implements it
// over MongoDB.
type TaskStore interface {
	MarkRunning(ctx context.Context, id int64, source, workflowID, runID string, now time.Time) error
	SaveCrawler(ctx context.Context, id int64, c crawl.CrawlerRecord, now time.Time) error
	Finish(ctx context.Context, id int64, f crawl.Finish, now time.Time) error
}

// ProgressStore closes a task's task_progress hash at the deadline (Fail) and reads it (Get, for
// the workflows that predate the close); *countscript.Store implements it over Redis.
type ProgressStore interface {
	Fail(ctx context.Context, originalTaskID int64) (crawl.Progress, error)
	Get(ctx context.Context, originalTaskID int64) (crawl.Progress, error)
}

// Activities are the crawl side effects, over the stores they need. The stores are interfaces
// so that this package, which workflows/crawl imports for the activities' method values, links
// no database or Kafka client (worker/crawl.go fills them).
type Activities struct {
	Tasks    TaskStore
	Progress ProgressStore
	// CrawlerCommand is the command template (CRAWL_CRAWLER_COMMAND).
	CrawlerCommand string
	// Brokers and Self fill the template's {brokers} and {self}.
	Brokers []string
	Self    string
	// HeartbeatEvery is how often a running crawler heartbeats.
	HeartbeatEvery time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now().UTC()
}

// MarkRunningInput is CrawlMarkRunning's input: it identifies the run that owns the task.
type MarkRunningInput struct {
	OriginalTaskID int64
	Source         string
}

// CrawlMarkRunning upserts crawl_tasks as Running for this workflow run; repeating
// it is harmless and it never reopens a task this run already finished.
func (a *Activities) CrawlMarkRunning(ctx context.Context, in MarkRunningInput) error {
	info := activity.GetInfo(ctx)
	return a.Tasks.MarkRunning(ctx, in.OriginalTaskID, in.Source, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, a.now())
}

// CrawlerOutcome is the crawler's exit status and last output lines.
type CrawlerOutcome struct {
	ExitCode  int
	LastLines []string
}

// Reason is the failure reason of a non-zero exit, with the crawler's last words.
func (o CrawlerOutcome) Reason() string {
	last := ""
	if n := len(o.LastLines); n > 0 {
		last = ": " + o.LastLines[n-1]
	}
	return fmt.Sprintf("crawler exited with status %d%s", o.ExitCode, last)
}

// CrawlerHeartbeat is the heartbeat detail while the crawler runs.
type CrawlerHeartbeat struct {
	Lines    int
	LastLine string
}

// CrawlRunCrawler runs the configured crawler command for the task, heartbeating
// its output, records the exit status and last lines in crawl_tasks, and
// returns them. It is not idempotent by nature (a crawler sends its tweets
// each time it runs), so the workflow gives it exactly one attempt.
func (a *Activities) CrawlRunCrawler(ctx context.Context, originalTaskID int64) (CrawlerOutcome, error) {
	if strings.TrimSpace(a.CrawlerCommand) == "" {
		return CrawlerOutcome{}, temporal.NewNonRetryableApplicationError(
			"no crawler configured (CRAWL_CRAWLER_COMMAND is empty)", ErrTypeCrawlerNotConfigured, nil)
	}
	argv, err := crawler.BuildCommand(a.CrawlerCommand, crawler.CommandVars{OriginalTaskID: originalTaskID, Brokers: a.Brokers, Self: a.Self})
	if err != nil {
		return CrawlerOutcome{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCrawlerNotConfigured, err)
	}
	runner := crawler.Runner{HeartbeatEvery: a.HeartbeatEvery, Heartbeat: func(lines int, last string) {
		activity.RecordHeartbeat(ctx, CrawlerHeartbeat{Lines: lines, LastLine: last})
	}}
	activity.GetLogger(ctx).Info("crawler starting", "original_task_id", originalTaskID, "command", argv)
	res, runErr := runner.Run(ctx, argv, nil)
	rec := crawl.CrawlerRecord{Command: argv, ExitCode: res.ExitCode, LastLines: res.LastLines, Lines: res.Lines,
		DurationMS: res.Duration.Milliseconds(), FinishedAt: a.now()}
	if runErr != nil {
		rec.ExitCode, rec.Error = -1, runErr.Error()
	}
	// Record what happened even when the run failed; use a fresh context so
	// a cancelled activity still leaves its trace.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.Tasks.SaveCrawler(sctx, originalTaskID, rec, a.now()); err != nil {
		return CrawlerOutcome{}, err
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return CrawlerOutcome{}, runErr
		}
		return CrawlerOutcome{}, temporal.NewNonRetryableApplicationError(runErr.Error(), ErrTypeCrawlerStart, runErr)
	}
	return CrawlerOutcome{ExitCode: res.ExitCode, LastLines: res.LastLines}, nil
}

// CrawlFailProgress marks the task_progress hash FAILED at the completion
// deadline unless it is COMPLETED, and returns the progress the script saw.
// Idempotent: the script leaves a FAILED or COMPLETED hash as it is, so a
// retry returns the same decision.
func (a *Activities) CrawlFailProgress(ctx context.Context, originalTaskID int64) (crawl.Progress, error) {
	return a.Progress.Fail(ctx, originalTaskID)
}

// FinishInput is CrawlFinish's input: the final status of a task.
type FinishInput struct {
	OriginalTaskID int64
	Finish         crawl.Finish
}

// CrawlFinish writes Completed or Failed once; crawl_tasks' status guard makes a
// repeat a no-op.
func (a *Activities) CrawlFinish(ctx context.Context, in FinishInput) error {
	if in.Finish.Status != crawl.Completed && in.Finish.Status != crawl.Failed {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("final status %q", in.Finish.Status), "BadStatus", errors.ErrUnsupported)
	}
	return a.Tasks.Finish(ctx, in.OriginalTaskID, in.Finish, a.now())
}
