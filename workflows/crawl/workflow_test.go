package crawl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
)

const testDeadline = 10 * time.Minute

func apiInput(id int64) Input {
	return Input{OriginalTaskID: id, Source: crawl.SourceAPI, CrawlerTimeout: time.Hour, CompletionDeadline: testDeadline}
}

type wfEnv struct {
	*testsuite.TestWorkflowEnvironment
	finished *crawlact.FinishInput
}

func newEnv(t *testing.T) *wfEnv {
	var s testsuite.WorkflowTestSuite
	e := &wfEnv{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment()}
	var a *crawlact.Activities
	e.RegisterActivity(a)
	e.OnActivity(a.CrawlMarkRunning, mock.Anything, mock.Anything).Return(nil)
	e.OnActivity(a.CrawlFinish, mock.Anything, mock.Anything).Return(func(_ context.Context, in crawlact.FinishInput) error {
		e.finished = &in
		return nil
	})
	return e
}

func (e *wfEnv) result(t *testing.T) State {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var s State
	if err := e.GetWorkflowResult(&s); err != nil {
		t.Fatal(err)
	}
	if e.finished == nil || e.finished.Finish.Status != s.Status {
		t.Fatalf("Finish activity got %+v, result %+v", e.finished, s)
	}
	return s
}

func crawlerExits(e *wfEnv, code int, after time.Duration) {
	var a *crawlact.Activities
	e.OnActivity(a.CrawlRunCrawler, mock.Anything, mock.Anything).After(after).
		Return(crawlact.CrawlerOutcome{ExitCode: code, LastLines: []string{"starting", "last words"}}, nil)
}

func TestCompletesWhenSignalledAfterCrawler(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(SignalCompleted, CompletedSignal{TotalTweets: 450, ProcessedTweets: 450, DeadLetteredRecords: 2, CompletedBy: "x:0:9"})
	}, 5*time.Minute)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(1))
	s := e.result(t)
	if s.Status != crawl.Completed || s.TotalTweets != 450 || s.ProcessedTweets != 450 || *s.CrawlerExitCode != 0 {
		t.Fatalf("state = %+v", s)
	}
	if e.finished.Finish.DeadLetteredRecords != 2 {
		t.Fatalf("finish = %+v", e.finished)
	}
}

func TestCompletesWhenSignalledDuringCrawl(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Hour)
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(SignalCompleted, CompletedSignal{TotalTweets: 3, ProcessedTweets: 3})
		// A repeated signal is absorbed.
		e.SignalWorkflow(SignalCompleted, CompletedSignal{TotalTweets: 3, ProcessedTweets: 3})
	}, time.Minute)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(2))
	if s := e.result(t); s.Status != crawl.Completed || s.ProcessedTweets != 3 {
		t.Fatalf("state = %+v", s)
	}
}

func TestCrawlerNonZeroExitFails(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 7, time.Minute)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(3))
	s := e.result(t)
	if s.Status != crawl.Failed || s.FailureReason != "crawler exited with status 7: last words" {
		t.Fatalf("state = %+v", s)
	}
}

func TestCrawlerActivityErrorFails(t *testing.T) {
	e := newEnv(t)
	var a *crawlact.Activities
	e.OnActivity(a.CrawlRunCrawler, mock.Anything, mock.Anything).Return(crawlact.CrawlerOutcome{},
		temporal.NewNonRetryableApplicationError("no crawler configured", crawlact.ErrTypeCrawlerNotConfigured, nil))
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(4))
	s := e.result(t)
	if s.Status != crawl.Failed || !strings.Contains(s.FailureReason, "no crawler configured") {
		t.Fatalf("state = %+v", s)
	}
}

func TestDeadlineFailsWithMissingCount(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	var a *crawlact.Activities
	e.OnActivity(a.CrawlFailProgress, mock.Anything, int64(5)).
		Return(crawl.Progress{TotalTweets: 450, ProcessedTweets: 440, DeadLetteredRecords: 3, Status: crawl.ProgressProcessing}, nil)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(5))
	s := e.result(t)
	if s.Status != crawl.Failed || s.MissingTweets != 10 || !strings.Contains(s.FailureReason, "10 of 450 tweets missing") {
		t.Fatalf("state = %+v", s)
	}
	if e.finished.Finish.MissingTweets != 10 || e.finished.Finish.DeadLetteredRecords != 3 {
		t.Fatalf("finish = %+v", e.finished)
	}
}

// A crawler that counted its copies in total_tweets: the task fails at the
// deadline with a reason saying how many distinct tweets and copies came.
func TestDeadlineWithCopiesSaysTotalMayCountDuplicates(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	var a *crawlact.Activities
	e.OnActivity(a.CrawlFailProgress, mock.Anything, int64(15)).
		Return(crawl.Progress{TotalTweets: 400, ProcessedTweets: 200, DuplicateTweets: 200, Status: crawl.ProgressFailed}, nil)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(15))
	s := e.result(t)
	want := "completion deadline 10m0s passed: 200 of 400 tweets missing; 200 distinct tweets arrived and 200 copies " +
		"of them were not counted, so total_tweets may include duplicates"
	if s.Status != crawl.Failed || s.FailureReason != want || s.DuplicateTweets != 200 {
		t.Fatalf("state = %+v", s)
	}
	if f := e.finished.Finish; f.DuplicateTweets != 200 || f.MissingTweets != 200 {
		t.Fatalf("finish = %+v", f)
	}
}

func TestDeadlineWithoutTaskInit(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	var a *crawlact.Activities
	e.OnActivity(a.CrawlFailProgress, mock.Anything, mock.Anything).Return(crawl.Progress{TotalTweets: -1, ProcessedTweets: 12}, nil)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(6))
	if s := e.result(t); s.Status != crawl.Failed || !strings.Contains(s.FailureReason, "without TASK_INIT") {
		t.Fatalf("state = %+v", s)
	}
}

// Completed in Redis as the timer fired: the signal is on its way, so the
// task is Completed, not Failed.
func TestDeadlineRaceWithCompletion(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	var a *crawlact.Activities
	e.OnActivity(a.CrawlFailProgress, mock.Anything, mock.Anything).Return(crawl.Progress{TotalTweets: 5, ProcessedTweets: 5, Status: crawl.ProgressCompleted}, nil)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(7))
	if s := e.result(t); s.Status != crawl.Completed {
		t.Fatalf("state = %+v", s)
	}
}

func TestStartedByConsumerSkipsCrawler(t *testing.T) {
	e := newEnv(t)
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(SignalCompleted, CompletedSignal{TotalTweets: 0, ProcessedTweets: 0})
	}, 0)
	e.ExecuteWorkflow(CrawlTaskWorkflow, Input{OriginalTaskID: 8, Source: crawl.SourceKafka, CompletionDeadline: testDeadline})
	if s := e.result(t); s.Status != crawl.Completed || s.CrawlerExitCode != nil {
		t.Fatalf("state = %+v", s)
	}
}

func TestQueryReportsPhase(t *testing.T) {
	e := newEnv(t)
	crawlerExits(e, 0, time.Minute)
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryState)
		if err != nil {
			t.Error(err)
			return
		}
		var s State
		if err := v.Get(&s); err != nil || s.Phase != PhaseAwaitingCompletion || s.Status != crawl.Running {
			t.Errorf("query = %+v, %v", s, err)
		}
		e.SignalWorkflow(SignalCompleted, CompletedSignal{TotalTweets: 1, ProcessedTweets: 1})
	}, 2*time.Minute)
	e.ExecuteWorkflow(CrawlTaskWorkflow, apiInput(9))
	e.result(t)
}

func TestInvalidInput(t *testing.T) {
	e := newEnv(t)
	e.ExecuteWorkflow(CrawlTaskWorkflow, Input{OriginalTaskID: 0, Source: crawl.SourceAPI})
	var appErr *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != "InvalidInput" {
		t.Fatalf("err = %v", err)
	}
}
