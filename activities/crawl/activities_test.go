package crawl_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newActivities(t *testing.T, command string) *crawlact.Activities {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	return &crawlact.Activities{
		Tasks:          crawl.NewTaskStore(testenv.Mongo(t)),
		Progress:       crawl.NewProgressStore(rdb, prefix, time.Hour, time.Hour),
		CrawlerCommand: command,
		Brokers:        []string{"b1:9092", "b2:9092"},
		HeartbeatEvery: 20 * time.Millisecond,
	}
}

func activityEnv(a *crawlact.Activities) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return env
}

func TestRunCrawlerRecordsExitAndHeartbeats(t *testing.T) {
	a := newActivities(t, `sh -c 'echo task {id} brokers {brokers}; sleep 0.2; echo bye; exit 4'`)
	env := activityEnv(a)
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, _ converter.EncodedValues) { beats.Add(1) })
	if _, err := env.ExecuteActivity(a.MarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 77, Source: crawl.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(a.RunCrawler, int64(77))
	if err != nil {
		t.Fatal(err)
	}
	var out crawlact.CrawlerOutcome
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 4 || out.Reason() != "crawler exited with status 4: bye" {
		t.Fatalf("outcome = %+v", out)
	}
	rec, err := a.Tasks.Get(context.Background(), 77)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != crawl.TaskRunning || rec.Crawler == nil || rec.Crawler.ExitCode != 4 ||
		strings.Join(rec.Crawler.LastLines, "|") != "task 77 brokers b1:9092,b2:9092|bye" {
		t.Fatalf("record = %+v crawler %+v", rec, rec.Crawler)
	}
	if beats.Load() == 0 {
		t.Fatal("no heartbeat while the crawler ran")
	}
}

func TestRunCrawlerWithoutCommandIsNonRetryable(t *testing.T) {
	for _, command := range []string{"", "crawler --everything"} {
		a := newActivities(t, command)
		_, err := activityEnv(a).ExecuteActivity(a.RunCrawler, int64(78))
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != crawlact.ErrTypeCrawlerNotConfigured || !appErr.NonRetryable() {
			t.Fatalf("command %q: err = %v", command, err)
		}
	}
}

func TestRunCrawlerMissingBinaryIsRecorded(t *testing.T) {
	a := newActivities(t, "/nonexistent/crawler --original-task-id {id}")
	env := activityEnv(a)
	if _, err := env.ExecuteActivity(a.MarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 79, Source: crawl.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	_, err := env.ExecuteActivity(a.RunCrawler, int64(79))
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != crawlact.ErrTypeCrawlerStart {
		t.Fatalf("err = %v", err)
	}
	rec, err := a.Tasks.Get(context.Background(), 79)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Crawler == nil || rec.Crawler.ExitCode != -1 || !strings.Contains(rec.Crawler.Error, "/nonexistent/crawler") {
		t.Fatalf("crawler record = %+v", rec.Crawler)
	}
}

func TestReadProgressAndFinish(t *testing.T) {
	a := newActivities(t, "")
	env := activityEnv(a)
	ctx := context.Background()
	if _, err := a.Progress.Apply(ctx, crawl.Update{TaskID: 80, Init: true, TotalTweets: 3,
		Coord: crawl.Coordinates{Topic: crawl.ControlTopicDefault, Offset: 0}}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(a.ReadProgress, int64(80))
	if err != nil {
		t.Fatal(err)
	}
	var p crawl.Progress
	if err := v.Get(&p); err != nil || p.TotalTweets != 3 || p.Status != crawl.StatusInitialized {
		t.Fatalf("progress = %+v, %v", p, err)
	}
	if _, err := env.ExecuteActivity(a.MarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 80, Source: crawl.SourceKafka}); err != nil {
		t.Fatal(err)
	}
	fin := crawlact.FinishInput{OriginalTaskID: 80, Finish: crawl.TaskFinish{Status: crawl.TaskFailed, TotalTweets: 3, MissingTweets: 3, FailureReason: "deadline"}}
	if _, err := env.ExecuteActivity(a.Finish, fin); err != nil {
		t.Fatal(err)
	}
	rec, err := a.Tasks.Get(ctx, 80)
	if err != nil || rec.Status != crawl.TaskFailed || *rec.MissingTweets != 3 || rec.Source != crawl.SourceKafka {
		t.Fatalf("record = %+v, %v", rec, err)
	}
	// At the deadline the hash becomes FAILED; a retry answers the same.
	for range 2 {
		v, err := env.ExecuteActivity(a.FailProgress, int64(80))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(&p); err != nil || p.TotalTweets != 3 || p.Status != crawl.StatusFailed {
			t.Fatalf("progress after FailProgress = %+v, %v", p, err)
		}
	}
	bad := crawlact.FinishInput{OriginalTaskID: 80, Finish: crawl.TaskFinish{Status: crawl.TaskRunning}}
	if _, err := env.ExecuteActivity(a.Finish, bad); err == nil {
		t.Fatal("Finish accepted a non-final status")
	}
}
