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
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stores are the real stores behind the activities, for the assertions.
type stores struct {
	tasks    *crawldb.Store
	progress *countscript.Store
}

func newActivities(t *testing.T, command string) (*crawlact.Activities, stores) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	st := stores{tasks: crawldb.New(testenv.Mongo(t)), progress: countscript.New(rdb, prefix, time.Hour, time.Hour)}
	return &crawlact.Activities{
		Tasks:          st.tasks,
		Progress:       st.progress,
		CrawlerCommand: command,
		Brokers:        []string{"b1:9092", "b2:9092"},
		HeartbeatEvery: 20 * time.Millisecond,
	}, st
}

func activityEnv(a *crawlact.Activities) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return env
}

func TestRunCrawlerRecordsExitAndHeartbeats(t *testing.T) {
	a, st := newActivities(t, `sh -c 'echo task {id} brokers {brokers}; sleep 0.2; echo bye; exit 4'`)
	env := activityEnv(a)
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, _ converter.EncodedValues) { beats.Add(1) })
	if _, err := env.ExecuteActivity(a.CrawlMarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 77, Source: crawl.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(a.CrawlRunCrawler, int64(77))
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
	rec, err := st.tasks.Get(context.Background(), 77)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != crawl.Running || rec.Crawler == nil || rec.Crawler.ExitCode != 4 ||
		strings.Join(rec.Crawler.LastLines, "|") != "task 77 brokers b1:9092,b2:9092|bye" {
		t.Fatalf("record = %+v crawler %+v", rec, rec.Crawler)
	}
	if beats.Load() == 0 {
		t.Fatal("no heartbeat while the crawler ran")
	}
}

func TestRunCrawlerWithoutCommandIsNonRetryable(t *testing.T) {
	for _, command := range []string{"", "crawler --everything"} {
		a, _ := newActivities(t, command)
		_, err := activityEnv(a).ExecuteActivity(a.CrawlRunCrawler, int64(78))
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != crawlact.ErrTypeCrawlerNotConfigured || !appErr.NonRetryable() {
			t.Fatalf("command %q: err = %v", command, err)
		}
	}
}

func TestRunCrawlerMissingBinaryIsRecorded(t *testing.T) {
	a, st := newActivities(t, "/nonexistent/crawler --original-task-id {id}")
	env := activityEnv(a)
	if _, err := env.ExecuteActivity(a.CrawlMarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 79, Source: crawl.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	_, err := env.ExecuteActivity(a.CrawlRunCrawler, int64(79))
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != crawlact.ErrTypeCrawlerStart {
		t.Fatalf("err = %v", err)
	}
	rec, err := st.tasks.Get(context.Background(), 79)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Crawler == nil || rec.Crawler.ExitCode != -1 || !strings.Contains(rec.Crawler.Error, "/nonexistent/crawler") {
		t.Fatalf("crawler record = %+v", rec.Crawler)
	}
}

func TestFailProgressAndFinish(t *testing.T) {
	a, st := newActivities(t, "")
	env := activityEnv(a)
	ctx := context.Background()
	if _, err := st.progress.Apply(ctx, crawl.Update{TaskID: 80, Init: true, TotalTweets: 3,
		Coord: crawl.Coordinates{Topic: crawl.ControlTopicDefault, Offset: 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ExecuteActivity(a.CrawlMarkRunning, crawlact.MarkRunningInput{OriginalTaskID: 80, Source: crawl.SourceKafka}); err != nil {
		t.Fatal(err)
	}
	fin := crawlact.FinishInput{OriginalTaskID: 80, Finish: crawl.Finish{Status: crawl.Failed, TotalTweets: 3, MissingTweets: 3, FailureReason: "deadline"}}
	if _, err := env.ExecuteActivity(a.CrawlFinish, fin); err != nil {
		t.Fatal(err)
	}
	rec, err := st.tasks.Get(ctx, 80)
	if err != nil || rec.Status != crawl.Failed || *rec.MissingTweets != 3 || rec.Source != crawl.SourceKafka {
		t.Fatalf("record = %+v, %v", rec, err)
	}
	// At the deadline the hash becomes FAILED; a retry answers the same.
	for range 2 {
		v, err := env.ExecuteActivity(a.CrawlFailProgress, int64(80))
		if err != nil {
			t.Fatal(err)
		}
		var p crawl.Progress
		if err := v.Get(&p); err != nil || p.TotalTweets != 3 || p.Status != crawl.ProgressFailed {
			t.Fatalf("progress after FailProgress = %+v, %v", p, err)
		}
	}
	bad := crawlact.FinishInput{OriginalTaskID: 80, Finish: crawl.Finish{Status: crawl.Running}}
	if _, err := env.ExecuteActivity(a.CrawlFinish, bad); err == nil {
		t.Fatal("CrawlFinish accepted a non-final status")
	}
}
