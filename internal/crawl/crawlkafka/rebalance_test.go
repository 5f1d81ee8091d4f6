package crawlkafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/testenv"
)

// overlapGuard is one progress counter shared by several members: each call
// takes delay, or slowDelay while slow is set (a slow Redis), and a
// partition counted by two calls at once is recorded.
type overlapGuard struct {
	crawl.ProgressCounter
	delay, slowDelay time.Duration
	slow             atomic.Bool

	mu       sync.Mutex
	busy     map[topicPartition]bool
	overlaps []string
}

func (g *overlapGuard) ApplyBatch(ctx context.Context, us []crawl.Update) ([]crawl.Outcome, error) {
	k := topicPartition{us[0].Coord.Topic, us[0].Coord.Partition}
	g.mu.Lock()
	if g.busy[k] {
		g.overlaps = append(g.overlaps, fmt.Sprintf("%s/%d at offset %d", k.topic, k.partition, us[0].Coord.Offset))
	}
	g.busy[k] = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.busy[k] = false
		g.mu.Unlock()
	}()
	sleep := g.delay
	if g.slow.Load() {
		sleep = g.slowDelay
	}
	time.Sleep(sleep)
	return g.ProgressCounter.ApplyBatch(ctx, us)
}

// Members join and leave while every partition is being counted, each
// rebalance while every partition has a slow batch in flight: a revoked
// partition's batch finishes before another member takes the partition over
// (from the last committed offset, before that batch), so no partition is
// ever counted by two members at once, and every tweet is counted once.
func TestConsumerRebalanceNeverCountsAPartitionTwiceAtOnce(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	guard := &overlapGuard{ProgressCounter: h.store, delay: 5 * time.Millisecond, slowDelay: 100 * time.Millisecond,
		busy: map[topicPartition]bool{}}
	assigned := make(chan struct{}, 16)
	member := func() (stop func()) {
		proc := h.processor(nil)
		proc.Store = guard
		c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics, BatchSize: 10,
			ExtraOpts: []kgo.Opt{kgo.AutoCommitInterval(100 * time.Millisecond), kgo.FetchMaxWait(50 * time.Millisecond),
				kgo.HeartbeatInterval(100 * time.Millisecond),
				kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
					if len(m[testTopics.Data]) > 0 {
						assigned <- struct{}{} // partitions moved (an empty assignment is a cooperative round's first)
					}
				})}}, proc)
		if err != nil {
			t.Fatal(err)
		}
		return testenv.Go(t, c.Run)
	}
	f := crawler.Crawl{OriginalTaskID: 903, Tweets: 2000, RepliesPerTweet: 1}
	total, err := f.Produce(context.Background(), h.producer, testTopics)
	if err != nil {
		t.Fatal(err)
	}
	counted := func(n int64) func() bool {
		return func() bool { return h.progress(t, 903).ProcessedTweets >= n }
	}
	// rebalance makes change while every partition's counts are slow and
	// keeps them slow until the group has assigned partitions again, and a
	// while after, so the members' batches meet across the handover.
	rebalance := func(what string, change func()) {
		for len(assigned) > 0 {
			<-assigned
		}
		guard.slow.Store(true)
		time.Sleep(50 * time.Millisecond) // every partition's next count is a slow one
		change()
		select {
		case <-assigned:
		case <-time.After(20 * time.Second):
			t.Fatalf("no partitions assigned after %s", what)
		}
		time.Sleep(300 * time.Millisecond)
		guard.slow.Store(false)
		before := h.progress(t, 903).ProcessedTweets
		waitFor(t, "counting after "+what, counted(before+40))
	}
	stopFirst := member()
	waitFor(t, "the first member counting", counted(40))
	rebalance("a second member joined", func() { member() })
	rebalance("a third member joined", func() { member() })
	rebalance("the first member left", stopFirst)
	waitFor(t, "completion", func() bool { return h.notifier.count(903) == 1 })
	if p := h.progress(t, 903); p.ProcessedTweets != total || p.DuplicateTweets != 0 {
		t.Fatalf("progress = %+v, want %d counted once", p, total)
	}
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if len(guard.overlaps) > 0 {
		t.Fatalf("partitions counted by two members at once: %v", guard.overlaps)
	}
}
