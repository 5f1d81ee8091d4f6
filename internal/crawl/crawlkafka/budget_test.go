package crawlkafka

import (
	"context"
	"testing"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/platform"
)

// TestCommandBudgets holds the crawl consumer's Redis cost (docs/benchmarks.md), counted
// with taskloom_redis_commands_total as the bench counts it: a task of 2,000 tweets x 2
// replies on 4 partitions, already on the broker when the consumer starts, costs at most 0.05
// Redis commands per tweet. The floor is one counting script call per task per partition
// batch (each batch carries all its records of the task in one atomic call, which dedupes
// and completes as one call per record did) plus one MarkSignaled per completed task: with
// batches of BatchSizeDefault records that is about 4 partitions x 2,000/4/500 batches + 2
// calls for 2,000 tweets, ~0.003 a tweet, plus each pooled connection's handshake (HELLO,
// CLIENT SETINFO). The budget leaves room for polls that split a partition's records into
// smaller batches; one call per tweet (1.0) is far over it.
func TestCommandBudgets(t *testing.T) {
	const tweets, budget = 2000, 0.05
	h := newKafkaHarness(t, testPartitions)
	platform.CountRedisCommands(h.rdb, h.registry)
	f := crawler.Crawl{OriginalTaskID: 950, Tweets: tweets, RepliesPerTweet: 2}
	total, err := f.Produce(context.Background(), h.producer, testTopics)
	if err != nil {
		t.Fatal(err)
	}
	h.startConsumer(t)
	waitFor(t, "completion", func() bool { return h.notifier.count(f.OriginalTaskID) > 0 })
	if p := h.progress(t, f.OriginalTaskID); p.Status != crawl.ProgressCompleted || p.ProcessedTweets != total {
		t.Fatalf("progress = %+v, want %d/%d COMPLETED", p, total, total)
	}
	// Counted before the progress read above: that one is the test's, not the consumer's.
	commands := h.counter(platform.RedisCommandsMetric) - 1
	perTweet := float64(commands) / float64(total)
	t.Logf("crawl: %d Redis commands for %d tweets, %.4f per tweet (evalsha %d)", commands, total, perTweet,
		h.counter(platform.RedisCommandsMetric, "command", "evalsha"))
	if perTweet > budget {
		t.Errorf("crawl: %.4f Redis commands per tweet, budget %.2f", perTweet, budget)
	}
}
