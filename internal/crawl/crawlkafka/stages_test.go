package crawlkafka

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/testenv"
)

// stageLog sits in front of the scheduler and the progress store and
// records which tweets' replies were acknowledged and which tweets were
// counted, in order, so a test can check the two stages across batches. Its
// first count of tweets waits until a second Submit was acknowledged (or 10 s
// passed), and overlapped says which happened.
type stageLog struct {
	scheduler crawl.Scheduler
	store     crawl.ProgressCounter
	// secondSubmit is closed when a second Submit with replies is acknowledged.
	secondSubmit chan struct{}
	overlapped   chan bool

	mu        sync.Mutex
	submitted map[string]bool // tweet id → its replies were acknowledged
	submits   int             // Submit calls with replies acknowledged
	held      bool            // the first count of tweets was held
	counted   []crawl.Update  // in the order they were counted
	early     []string        // tweets counted before their replies were acknowledged
}

func newStageLog(scheduler crawl.Scheduler, store crawl.ProgressCounter) *stageLog {
	return &stageLog{scheduler: scheduler, store: store, secondSubmit: make(chan struct{}),
		overlapped: make(chan bool, 1), submitted: map[string]bool{}}
}

func (l *stageLog) Submit(ctx context.Context, tasks []crawl.ReplyTask) error {
	if err := l.scheduler.Submit(ctx, tasks); err != nil {
		return err
	}
	if len(tasks) == 0 {
		return nil // a batch without replies (the control topic's)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range tasks {
		l.submitted[t.TweetID] = true
	}
	if l.submits++; l.submits == 2 {
		close(l.secondSubmit)
	}
	return nil
}

func (l *stageLog) ApplyBatch(ctx context.Context, us []crawl.Update) ([]crawl.Outcome, error) {
	l.mu.Lock()
	hold := !l.held && us[0].TweetID != ""
	l.held = l.held || hold
	l.mu.Unlock()
	if hold {
		select {
		case <-l.secondSubmit:
			l.overlapped <- true
		case <-time.After(10 * time.Second):
			l.overlapped <- false
		}
	}
	l.mu.Lock()
	for _, u := range us {
		if u.TweetID != "" && !l.submitted[u.TweetID] {
			l.early = append(l.early, u.TweetID)
		}
		l.counted = append(l.counted, u)
	}
	l.mu.Unlock()
	return l.store.ApplyBatch(ctx, us)
}

func (l *stageLog) MarkSignaled(ctx context.Context, taskID int64) error {
	return l.store.MarkSignaled(ctx, taskID)
}

// The two stages of a partition overlap: while the first batch is being
// counted, the second batch's replies are submitted. Across the overlap a
// tweet is still counted only after its replies were acknowledged, the
// partition is counted in offset order, and every tweet once.
func TestConsumerPreparesNextBatchWhileCounting(t *testing.T) {
	h := newKafkaHarness(t, 1)
	proc := h.processor(nil)
	log := newStageLog(proc.Scheduler, proc.Store)
	proc.Scheduler, proc.Store = log, log
	c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics, BatchSize: 10}, proc)
	if err != nil {
		t.Fatal(err)
	}
	f := crawler.Crawl{OriginalTaskID: 901, Tweets: 60, RepliesPerTweet: 1}
	h.produce(t, fakeCrawlRecords(t, f)...) // one partition, one poll: six batches of 10
	testenv.Go(t, c.Run)
	if !<-log.overlapped {
		t.Fatal("the second batch's replies were not submitted while the first batch was being counted")
	}
	waitFor(t, "completion", func() bool { return h.notifier.count(901) == 1 })
	if p := h.progress(t, 901); p.ProcessedTweets != 60 || p.DuplicateTweets != 0 {
		t.Fatalf("progress = %+v, want 60 counted once", p)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.early) > 0 {
		t.Fatalf("tweets counted before their replies were acknowledged: %v", log.early)
	}
	last := map[topicPartition]int64{}
	for _, u := range log.counted {
		k := topicPartition{u.Coord.Topic, u.Coord.Partition}
		if prev, ok := last[k]; ok && u.Coord.Offset <= prev {
			t.Fatalf("%+v counted at offset %d after offset %d", k, u.Coord.Offset, prev)
		}
		last[k] = u.Coord.Offset
	}
}

// flakyCounter fails ApplyBatch while down > 0 (each failure takes one off)
// and any call above limit updates (0: no limit), as a Redis that is down
// for a while, or that times out on large script calls, would.
type flakyCounter struct {
	crawl.ProgressCounter
	mu    sync.Mutex
	down  int
	limit int
}

func (f *flakyCounter) ApplyBatch(ctx context.Context, us []crawl.Update) ([]crawl.Outcome, error) {
	f.mu.Lock()
	fail := f.down > 0 || (f.limit > 0 && len(us) > f.limit)
	if f.down > 0 {
		f.down--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("redis: connection refused")
	}
	return f.ProgressCounter.ApplyBatch(ctx, us)
}

// Counting waits out a Redis that is down and gives a Redis that only
// copes with small calls smaller ones: nothing is lost or counted twice,
// and no reply is submitted twice for it.
func TestConsumerCountRetriesFailedRedis(t *testing.T) {
	for _, tc := range []struct {
		name        string
		down, limit int
	}{{"down for three calls", 3, 0}, {"large calls time out", 0, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newKafkaHarness(t, 1)
			proc := h.processor(nil)
			proc.Store = &flakyCounter{ProgressCounter: proc.Store, down: tc.down, limit: tc.limit}
			c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics, BatchSize: 10}, proc)
			if err != nil {
				t.Fatal(err)
			}
			testenv.Go(t, c.Run)
			f := crawler.Crawl{OriginalTaskID: 902, Tweets: 30, RepliesPerTweet: 1}
			h.produce(t, fakeCrawlRecords(t, f)...)
			waitFor(t, "completion", func() bool { return h.notifier.count(902) == 1 })
			if p := h.progress(t, 902); p.ProcessedTweets != 30 || p.DuplicateTweets != 0 {
				t.Fatalf("progress = %+v, want 30 counted once", p)
			}
			if n := h.counter("taskloom_crawl_batch_retries_total"); n == 0 {
				t.Fatal("no count was retried")
			}
			if got := len(h.readTopic(t, testSchedulerTopic, 30)); got != 30 {
				t.Fatalf("scheduler got %d reply tasks, want 30 (a failed count must not resubmit)", got)
			}
		})
	}
}
