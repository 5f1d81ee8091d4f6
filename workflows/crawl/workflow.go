// Package crawl holds CrawlTaskWorkflow: one workflow per original crawl task, from running the
// crawler to Completed or Failed (docs/crawl.md).
package crawl

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/waiting"
)

// Kind is the TaskloomKind search attribute value of crawl workflows.
const Kind = "crawl"

// Activity timeouts: the store activities are short single-document writes
// or one Redis read.
const (
	storeActivityTimeout = 30 * time.Second
	storeRetryMax        = time.Minute
	// crawlerHeartbeatTimeout must exceed the runner's heartbeat interval
	// (crawler.HeartbeatEveryDefault) with room for a slow worker.
	crawlerHeartbeatTimeout = time.Minute
)

// Input starts a crawl task.
type Input struct {
	OriginalTaskID int64
	// Source is crawl.SourceAPI (taskloom runs the crawler) or
	// crawl.SourceKafka (the crawler ran elsewhere; only completion is awaited).
	Source string
	// CrawlerTimeout bounds the crawler run (CRAWL_CRAWLER_TIMEOUT).
	CrawlerTimeout time.Duration
	// CompletionDeadline is how long to wait for completion once the crawler
	// has exited (CRAWL_COMPLETION_DEADLINE). Kept in the input so a config
	// change never alters a running workflow's decisions.
	CompletionDeadline time.Duration
}

func (in Input) validate() error {
	switch {
	case in.OriginalTaskID <= 0:
		return fmt.Errorf("original_task_id %d is not positive", in.OriginalTaskID)
	case in.Source != crawl.SourceAPI && in.Source != crawl.SourceKafka:
		return fmt.Errorf("source %q is neither %s nor %s", in.Source, crawl.SourceAPI, crawl.SourceKafka)
	case in.Source == crawl.SourceAPI && in.CrawlerTimeout <= 0:
		return errors.New("crawler timeout must be positive")
	case in.CompletionDeadline <= 0:
		return errors.New("completion deadline must be positive")
	}
	return nil
}

// State is what QueryState returns and the workflow's result.
type State struct {
	OriginalTaskID  int64
	Status          string // crawl.Running / crawl.Completed / crawl.Failed
	Phase           string // crawling, awaiting_completion, finished
	TotalTweets     int64  // -1 while unknown
	ProcessedTweets int64
	DuplicateTweets int64
	// DeadLetteredRecords: records naming the task that went to the
	// dead-letter topic, as counted when the task finished.
	DeadLetteredRecords int64
	MissingTweets       int64
	FailureReason       string
	CrawlerExitCode     *int
	// WaitingFor is what the task waits for (nil once finished): the crawler, or its tweets
	// until the completion deadline.
	WaitingFor *waiting.For
}

// Workflow phases reported by QueryState.
const (
	PhaseCrawling           = "crawling"
	PhaseAwaitingCompletion = "awaiting_completion"
	PhaseFinished           = "finished"
)

// CrawlTaskWorkflow marks the task Running, runs the crawler (for tasks
// started through taskloom), waits for the completion signal or the
// deadline, and writes Completed or Failed.
func CrawlTaskWorkflow(ctx workflow.Context, in Input) (State, error) {
	w, err := setup(ctx, in)
	if err != nil {
		return State{}, err
	}
	return w.run(ctx)
}

type run struct {
	in        Input
	state     State
	log       log.Logger
	completed workflow.ReceiveChannel
	signal    *CompletedSignal
}

// acts names the activities the workflow schedules: a nil receiver's method values only name the
// activity type (its method name, CrawlMarkRunning, …) and type its arguments.
var acts *crawlact.Activities

func setup(ctx workflow.Context, in Input) (*run, error) {
	if err := in.validate(); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidInput", nil)
	}
	w := &run{
		in:        in,
		state:     State{OriginalTaskID: in.OriginalTaskID, Status: crawl.Running, TotalTweets: -1},
		log:       log.With(workflow.GetLogger(ctx), "original_task_id", in.OriginalTaskID),
		completed: workflow.GetSignalChannel(ctx, SignalCompleted),
	}
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) { return w.state, nil }); err != nil {
		return nil, fmt.Errorf("register %s query: %w", QueryState, err)
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Kind.ValueSet(Kind),
		searchattr.Status.ValueSet(crawl.SearchStatus(crawl.Running)), searchattr.OriginalTaskID.ValueSet(in.OriginalTaskID)); err != nil {
		return nil, fmt.Errorf("set search attributes: %w", err)
	}
	return w, nil
}

func (w *run) run(ctx workflow.Context) (State, error) {
	sctx := storeContext(ctx, "mark crawl_tasks running")
	if err := workflow.ExecuteActivity(sctx, acts.CrawlMarkRunning,
		crawlact.MarkRunningInput{OriginalTaskID: w.in.OriginalTaskID, Source: w.in.Source}).Get(ctx, nil); err != nil {
		return w.state, fmt.Errorf("mark crawl task running: %w", err)
	}
	if w.in.Source == crawl.SourceAPI {
		w.state.Phase = PhaseCrawling
		now := workflow.Now(ctx)
		w.show(ctx, waiting.New(waiting.Crawler, "the crawler runs", now, now.Add(w.in.CrawlerTimeout)))
		if reason := w.crawl(ctx); reason != "" {
			return w.finish(ctx, crawl.Failed, reason)
		}
	}
	w.state.Phase = PhaseAwaitingCompletion
	now := workflow.Now(ctx)
	w.show(ctx, waiting.New(waiting.TweetsMissing, "waiting for every tweet to be processed (counts: GET /api/v1/crawl-tasks/"+
		strconv.FormatInt(w.in.OriginalTaskID, 10)+")", now, now.Add(w.in.CompletionDeadline)))
	if w.awaitCompletion(ctx) {
		w.state.TotalTweets, w.state.ProcessedTweets = w.signal.TotalTweets, w.signal.ProcessedTweets
		w.state.DuplicateTweets, w.state.DeadLetteredRecords = w.signal.DuplicateTweets, w.signal.DeadLetteredRecords
		return w.finish(ctx, crawl.Completed, "")
	}
	return w.deadlinePassed(ctx)
}

// crawl runs the crawler while listening for the completion signal (a fast
// crawler's tweets may all be counted before it exits). It returns the
// failure reason, or "" when the crawler succeeded.
func (w *run) crawl(ctx workflow.Context) string {
	cctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: w.in.CrawlerTimeout,
		HeartbeatTimeout:    crawlerHeartbeatTimeout,
		// A second run would send every tweet again, so the crawler gets
		// one attempt: failing to start or exiting non-zero fails the task.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:     fmt.Sprintf("run the crawler for task %d", w.in.OriginalTaskID),
	})
	fut := workflow.ExecuteActivity(cctx, acts.CrawlRunCrawler, w.in.OriginalTaskID)
	sel := workflow.NewSelector(ctx)
	done := false
	sel.AddFuture(fut, func(workflow.Future) { done = true })
	sel.AddReceive(w.completed, w.receiver(ctx))
	for !done {
		sel.Select(ctx)
	}
	var out crawlact.CrawlerOutcome
	if err := fut.Get(ctx, &out); err != nil {
		w.log.Warn("crawler failed", "error", err)
		return "crawler failed: " + rootMessage(err)
	}
	w.state.CrawlerExitCode = &out.ExitCode
	if out.ExitCode != 0 {
		return out.Reason()
	}
	return ""
}

// receiver records the first completion signal; repeats are drained and
// dropped.
func (w *run) receiver(ctx workflow.Context) func(workflow.ReceiveChannel, bool) {
	return func(c workflow.ReceiveChannel, _ bool) {
		var s CompletedSignal
		c.Receive(ctx, &s)
		if w.signal == nil {
			w.signal = &s
		}
	}
}

// awaitCompletion waits for the completion signal until the deadline and
// reports whether it came. Repeated signals (a consumer crash between
// signalling and recording it) are absorbed by receive.
func (w *run) awaitCompletion(ctx workflow.Context) bool {
	if w.signal != nil {
		return true
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timedOut := false
	sel := workflow.NewSelector(ctx)
	// The same timer command as workflow.NewTimer, with a summary for the Web UI.
	sel.AddFuture(workflow.NewTimerWithOptions(tctx, w.in.CompletionDeadline, workflow.TimerOptions{
		Summary: "completion deadline " + w.in.CompletionDeadline.String()}), func(workflow.Future) { timedOut = true })
	sel.AddReceive(w.completed, w.receiver(ctx))
	for w.signal == nil && !timedOut {
		sel.Select(ctx)
	}
	return w.signal != nil
}

// deadlinePassed reads the counters once more, marking the hash FAILED
// unless it completed (CrawlFailProgress), so a failed task's hash says
// FAILED and a late tweet cannot complete it. A task that completed in Redis
// just as the timer fired counts as completed (its signal is on its way).
func (w *run) deadlinePassed(ctx workflow.Context) (State, error) {
	var p crawl.Progress
	if err := workflow.ExecuteActivity(storeContext(ctx, "close task_progress at the deadline"), acts.CrawlFailProgress,
		w.in.OriginalTaskID).Get(ctx, &p); err != nil {
		return w.state, fmt.Errorf("read crawl progress: %w", err)
	}
	w.state.TotalTweets, w.state.ProcessedTweets, w.state.DuplicateTweets = p.TotalTweets, p.ProcessedTweets, p.DuplicateTweets
	w.state.DeadLetteredRecords = p.DeadLetteredRecords
	if p.Status == crawl.ProgressCompleted {
		return w.finish(ctx, crawl.Completed, "")
	}
	w.state.MissingTweets = p.Missing()
	return w.finish(ctx, crawl.Failed, DeadlineReason(w.in.CompletionDeadline, p))
}

// DeadlineReason is the failure reason of a task whose deadline passed.
// When copies arrived, the crawler may have counted them in total_tweets
// (which must count distinct tweets); the reason says so rather than let
// the task look merely short of tweets.
func DeadlineReason(deadline time.Duration, p crawl.Progress) string {
	if p.TotalTweets < 0 {
		return fmt.Sprintf("completion deadline %s passed without TASK_INIT; %d tweets processed", deadline, p.ProcessedTweets)
	}
	reason := fmt.Sprintf("completion deadline %s passed: %d of %d tweets missing", deadline, p.Missing(), p.TotalTweets)
	if p.DuplicateTweets > 0 {
		reason += fmt.Sprintf("; %d distinct tweets arrived and %d copies of them were not counted, "+
			"so total_tweets may include duplicates", p.ProcessedTweets, p.DuplicateTweets)
	}
	return reason
}

func (w *run) finish(ctx workflow.Context, status, reason string) (State, error) {
	w.state.Status, w.state.FailureReason, w.state.Phase = status, reason, PhaseFinished
	w.show(ctx, nil)
	in := crawlact.FinishInput{OriginalTaskID: w.in.OriginalTaskID, Finish: crawl.Finish{
		Status: status, TotalTweets: w.state.TotalTweets, ProcessedTweets: w.state.ProcessedTweets,
		DuplicateTweets: w.state.DuplicateTweets, DeadLetteredRecords: w.state.DeadLetteredRecords,
		MissingTweets: w.state.MissingTweets, FailureReason: reason,
	}}
	if err := workflow.ExecuteActivity(storeContext(ctx, "record crawl_tasks "+status), acts.CrawlFinish, in).Get(ctx, nil); err != nil {
		return w.state, fmt.Errorf("finish crawl task as %s: %w", status, err)
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(crawl.SearchStatus(status))); err != nil {
		return w.state, fmt.Errorf("set status search attribute: %w", err)
	}
	w.log.Info("crawl task finished", "status", status, "reason", reason,
		"total_tweets", w.state.TotalTweets, "processed_tweets", w.state.ProcessedTweets)
	return w.state, nil
}

func storeContext(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: storeActivityTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: storeRetryMax},
		Summary:             summary,
	})
}

// show sets what the task waits for on the state query and as the execution's current details
// (docs/operations.md "What each execution shows"); nil shows how it finished.
func (w *run) show(ctx workflow.Context, wait *waiting.For) {
	w.state.WaitingFor = wait
	if wait != nil {
		workflow.SetCurrentDetails(ctx, w.state.Phase+": "+wait.Sentence())
		return
	}
	line := fmt.Sprintf("%s: %d of %s tweets processed", w.state.Status, w.state.ProcessedTweets, total(w.state.TotalTweets))
	if w.state.FailureReason != "" {
		line += "; " + w.state.FailureReason
	}
	workflow.SetCurrentDetails(ctx, line)
}

// total is total_tweets as a person reads it: "?" until TASK_INIT told it.
func total(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

// rootMessage is the innermost error's message (an activity error wraps the
// application error that says what happened).
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
