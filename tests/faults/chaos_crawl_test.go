//go:build chaos

package faults_test

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
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
	load := newCrawlLoad(t, env, 3800, 7)
	load.waitCounting(t, time.Minute)

	mr.Close()
	load.produceRest(t)
	time.Sleep(3 * time.Second)
	if err := mr.Restart(); err != nil {
		t.Fatalf("restart miniredis: %v", err)
	}
	load.requireExactCompletion(t, 2*time.Minute)
	t.Logf("%d tweet messages, Redis down for 3 s mid-count: completed with processed == total == %d", load.sent, load.total)
}
