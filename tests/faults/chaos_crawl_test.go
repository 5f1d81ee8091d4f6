//go:build chaos

package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// Fault: Redis goes away in the middle of a crawl task's counting and comes back 3 s later.
// Load: 4,000 tweet messages (5% sent twice, as the crawler may) over 4 partitions, half before
// the outage and half during it. Must hold: counting pauses (the consumer retries its batch
// and does not commit), then resumes; the task completes with processed_tweets == total_tweets
// exactly — nothing lost, nothing counted twice.
func TestRedisOutagePausesCrawlCountingWithoutLossOrDoubleCount(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	env := e2e.New(t, func(c *config.Config) {
		c.Redis.URL = "redis://" + mr.Addr()
		c.Crawl.ConsumerGroup = testenv.Unique("chaos-crawl-")
	})
	cfg := env.Config.Crawl
	topics := crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic}
	f := crawl.FakeCrawl{OriginalTaskID: time.Now().UnixNano()%1_000_000_000 + 1, Tweets: 3800, DupRate: 0.05, RepliesPerTweet: 1, Seed: 7}
	recs, err := f.Records(topics)
	if err != nil {
		t.Fatal(err)
	}
	_, data := f.Messages()
	total := int64(len(data))
	prod, err := kgo.NewClient(kgo.SeedBrokers(env.Config.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx := env.Context()
	half := len(recs) / 2
	if err := prod.ProduceSync(ctx, recs[:half]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	progress := crawl.NewPlatformProgressStore(env.Platform)
	e2e.Eventually(t, time.Minute, "counting to start", func() bool {
		p, err := progress.Get(ctx, f.OriginalTaskID)
		return err == nil && p.ProcessedTweets > 0
	})

	mr.Close()
	if err := prod.ProduceSync(ctx, recs[half:]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := mr.Restart(); err != nil {
		t.Fatalf("restart miniredis: %v", err)
	}

	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var st crawlwf.State
	for {
		err := env.Platform.Temporal.GetWorkflow(wctx, crawlwf.WorkflowID(f.OriginalTaskID), "").Get(wctx, &st)
		if err == nil {
			break
		}
		if wctx.Err() != nil {
			t.Fatalf("crawl task did not finish after Redis came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Status != crawl.TaskCompleted || st.ProcessedTweets != total || st.TotalTweets != total {
		t.Fatalf("task ended %s with processed %d, total %d; want Completed with %d of %d", st.Status, st.ProcessedTweets, st.TotalTweets, total, total)
	}
	t.Logf("%d tweet messages, Redis down for 3 s mid-count: completed with processed == total == %d", total, total)
}
