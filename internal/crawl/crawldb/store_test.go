package crawldb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTaskStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := crawldb.New(testenv.Mongo(t))
	now := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := s.Get(ctx, 1); !errors.Is(err, crawl.ErrTaskNotFound) {
		t.Fatalf("missing task: err = %v", err)
	}
	if err := s.MarkRunning(ctx, 1, crawl.SourceAPI, "crawl-1", "run-a", now); err != nil {
		t.Fatal(err)
	}
	// A retried MarkRunning is harmless.
	if err := s.MarkRunning(ctx, 1, crawl.SourceAPI, "crawl-1", "run-a", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	rec := crawl.CrawlerRecord{Command: []string{"crawler", "1"}, ExitCode: 0, LastLines: []string{"done"}, Lines: 1, FinishedAt: now}
	if err := s.SaveCrawler(ctx, 1, rec, now); err != nil {
		t.Fatal(err)
	}
	fail := crawl.Finish{Status: crawl.Failed, TotalTweets: 10, ProcessedTweets: 7, DuplicateTweets: 1,
		DeadLetteredRecords: 2, MissingTweets: 3, FailureReason: "deadline"}
	if err := s.Finish(ctx, 1, fail, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A repeated Finish and a late MarkRunning of the same run change nothing.
	if err := s.Finish(ctx, 1, crawl.Finish{Status: crawl.Completed, TotalTweets: 10, ProcessedTweets: 10}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkRunning(ctx, 1, crawl.SourceAPI, "crawl-1", "run-a", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != crawl.Failed || got.TotalTweets == nil || *got.TotalTweets != 10 || got.ProcessedTweets != 7 ||
		got.DuplicateTweets != 1 || got.DeadLetteredRecords != 2 ||
		got.MissingTweets == nil || *got.MissingTweets != 3 || got.FailureReason != "deadline" ||
		got.Crawler == nil || got.Crawler.LastLines[0] != "done" || !got.FinishedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("record = %+v", got)
	}
}
