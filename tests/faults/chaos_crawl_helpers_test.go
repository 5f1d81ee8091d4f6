//go:build chaos

package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// crawlLoad is one fake crawl (5% of tweets sent twice, as the crawler may) produced in two
// halves around a fault: the first half by newCrawlLoad, the rest by produceRest.
type crawlLoad struct {
	env  *e2e.Env
	task int64
	rest []*kgo.Record
	// total is total_tweets: the distinct tweets; sent counts the copies too
	// (5% of tweets are sent twice with the same id, and are not counted).
	total    int64
	sent     int
	prod     *kgo.Client
	progress *countscript.Store
}

func newCrawlLoad(t *testing.T, env *e2e.Env, tweets int, seed uint64) *crawlLoad {
	t.Helper()
	cfg := env.Config.Crawl
	f := crawler.Crawl{OriginalTaskID: time.Now().UnixNano()%1_000_000_000 + 1, Tweets: tweets, DupRate: 0.05,
		RepliesPerTweet: 1, Seed: seed}
	recs, err := f.Records(crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic})
	if err != nil {
		t.Fatal(err)
	}
	init, data := f.Messages()
	prod, err := kgo.NewClient(kgo.SeedBrokers(env.Config.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	half := len(recs) / 2
	l := &crawlLoad{env: env, task: f.OriginalTaskID, rest: recs[half:], total: init.TotalTweets, sent: len(data), prod: prod,
		progress: countscript.FromPlatform(env.Platform)}
	if err := prod.ProduceSync(env.Context(), recs[:half]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return l
}

// processed is the task's processed_tweets now.
func (l *crawlLoad) processed() int64 {
	p, err := l.progress.Get(l.env.Context(), l.task)
	if err != nil {
		return 0
	}
	return p.ProcessedTweets
}

// waitCounting waits until some tweets are counted and returns how many.
func (l *crawlLoad) waitCounting(t *testing.T, within time.Duration) int64 {
	t.Helper()
	var n int64
	e2e.Eventually(t, within, "counting to start", func() bool { n = l.processed(); return n > 0 })
	return n
}

func (l *crawlLoad) produceRest(t *testing.T) {
	t.Helper()
	l.produceNext(t, len(l.rest))
}

// produceNext produces the next n records not yet produced (fewer when fewer remain).
func (l *crawlLoad) produceNext(t *testing.T, n int) {
	t.Helper()
	n = min(n, len(l.rest))
	if err := l.prod.ProduceSync(l.env.Context(), l.rest[:n]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	l.rest = l.rest[n:]
}

// requireExactCompletion waits for the task's workflow and requires Completed with
// processed_tweets == total_tweets == the distinct tweets produced: nothing lost, nothing counted
// twice (neither a redelivered record nor a copy of a tweet).
func (l *crawlLoad) requireExactCompletion(t *testing.T, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(l.env.Context(), within)
	defer cancel()
	var st crawlwf.State
	for {
		err := l.env.Platform.Temporal.GetWorkflow(ctx, crawlwf.WorkflowID(l.task), "").Get(ctx, &st)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("crawl task did not finish: %v (processed %d of %d)", err, l.processed(), l.total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Status != crawl.Completed || st.ProcessedTweets != l.total || st.TotalTweets != l.total {
		t.Fatalf("task ended %s with processed %d, total %d; want Completed with %d of %d",
			st.Status, st.ProcessedTweets, st.TotalTweets, l.total, l.total)
	}
}
