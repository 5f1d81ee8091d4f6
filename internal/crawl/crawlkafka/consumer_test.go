package crawlkafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/testenv"
)

func fakeCrawlRecords(t testing.TB, f crawler.Crawl) []*kgo.Record {
	t.Helper()
	recs, err := f.Records(testTopics)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestConsumerOrderings(t *testing.T) {
	cases := []struct {
		name string
		f    crawler.Crawl
	}{
		{"normal order", crawler.Crawl{OriginalTaskID: 101, Tweets: 40, RepliesPerTweet: 2}},
		{"TASK_INIT last", crawler.Crawl{OriginalTaskID: 102, Tweets: 40, RepliesPerTweet: 2, InitLast: true}},
		{"zero tweets", crawler.Crawl{OriginalTaskID: 103, Tweets: 0}},
	}
	h := newKafkaHarness(t, testPartitions)
	h.startConsumer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			total, err := tc.f.Produce(context.Background(), h.producer, testTopics)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "completion", func() bool { return h.notifier.count(tc.f.OriginalTaskID) > 0 })
			p := h.progress(t, tc.f.OriginalTaskID)
			if p.Status != crawl.ProgressCompleted || p.ProcessedTweets != total || p.TotalTweets != total {
				t.Fatalf("progress = %+v, want %d/%d COMPLETED", p, total, total)
			}
		})
	}
	// Every reply was handed to the scheduler: 80 + 80.
	tasks := h.readTopic(t, testSchedulerTopic, 160)
	if len(tasks) != 160 {
		t.Fatalf("scheduler got %d reply tasks, want 160", len(tasks))
	}
	for _, id := range []int64{101, 102, 103} {
		if n := h.notifier.count(id); n != 1 {
			t.Errorf("task %d notified %d times, want 1", id, n)
		}
	}
	// A TASK_INIT either completes its task or announces it, never both and
	// never neither. Which one depends on whether the consumer counted the
	// tweets before it: TASK_INIT and the tweets are on different topics,
	// which Kafka does not order against each other, whatever the produce
	// order. Task 103 has no tweets, so its TASK_INIT always completes it.
	for _, id := range []int64{101, 102, 103} {
		announced, completed := h.notifier.announcements(id), h.notifier.completedByInit(id)
		if announced+completed != 1 {
			t.Errorf("task %d: TASK_INIT announced %d times and completed %d times, want exactly one of them", id, announced, completed)
		}
	}
	if n := h.notifier.completedByInit(103); n != 1 {
		t.Errorf("task 103 (no tweets) completed by TASK_INIT %d times, want 1", n)
	}
}

// Every record is processed twice: the first member counts everything but
// dies before any offset commit lands, the second starts from the beginning.
func TestConsumerRedeliveryCountsOnce(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	f := crawler.Crawl{OriginalTaskID: 201, Tweets: 60, RepliesPerTweet: 1, InitLast: true}
	h.failCommit.Store(true)
	stop := h.startConsumer(t)
	total, err := f.Produce(context.Background(), h.producer, testTopics)
	if err != nil {
		t.Fatal(err)
	}
	// The completions metric moves after MarkSignaled: stopping before it
	// would be a crash between the signal and its mark, which rightly
	// signals again on redelivery (the workflow ignores the copy).
	waitFor(t, "first completion marked signaled", func() bool {
		return h.counter("taskloom_crawl_completions_total") == 1
	})
	stop()
	h.failCommit.Store(false)

	h.startConsumer(t)
	// The second member re-submits every reply (at least once downstream,
	// with the same idempotency keys) and counts nothing again.
	tasks := h.readTopic(t, testSchedulerTopic, 120)
	keys := map[string]int{}
	for _, r := range tasks {
		keys[HeaderValue(r, "idempotency_key")]++
	}
	if len(tasks) != 120 || len(keys) != 60 {
		t.Fatalf("scheduler got %d tasks with %d distinct keys, want 120 and 60", len(tasks), len(keys))
	}
	// Replies are handed over before counting, so the second pass's
	// duplicates may still be on their way.
	waitFor(t, "61 duplicates", func() bool {
		return h.recorded(testTopics.Data, string(crawl.ResultDuplicate))+h.recorded(testTopics.Control, string(crawl.ResultDuplicate)) == 61
	})
	p := h.progress(t, 201)
	if p.ProcessedTweets != total || p.Status != crawl.ProgressCompleted {
		t.Fatalf("progress = %+v, want %d processed", p, total)
	}
	if n := h.notifier.count(201); n != 1 {
		t.Fatalf("completion notified %d times, want 1", n)
	}
	if counted := h.recorded(testTopics.Data, string(crawl.ResultCounted)); counted != 60 {
		t.Fatalf("counted metric = %d, want 60", counted)
	}
}

func TestConsumerMalformedGoesToDeadLetter(t *testing.T) {
	h := newKafkaHarness(t, 1)
	h.startConsumer(t)
	f := crawler.Crawl{OriginalTaskID: 401, Tweets: 5, RepliesPerTweet: 1}
	recs := fakeCrawlRecords(t, f)
	bad := []*kgo.Record{
		{Topic: testTopics.Data, Value: []byte(`{"original_task_id": 401, "tweet_data": `)},
		{Topic: testTopics.Control, Value: []byte(`{"type":"TASK_DONE","original_task_id":401,"total_tweets":1}`)},
		{Topic: testTopics.Data, Value: []byte(`{"original_task_id": 401}`)},
	}
	// Poison records sit between good ones on the same partition.
	h.produce(t, recs[:3]...)
	h.produce(t, bad...)
	h.produce(t, recs[3:]...)
	waitFor(t, "completion", func() bool { return h.notifier.count(401) > 0 })
	letters := h.readTopic(t, testDLQTopic, 3)
	if len(letters) != 3 {
		t.Fatalf("dead letters = %d, want 3", len(letters))
	}
	// Different topics interleave freely, so match letters by content.
	sources := map[string]string{}
	for _, b := range bad {
		sources[string(b.Value)] = b.Topic
	}
	for _, l := range letters {
		topic, ok := sources[string(l.Value)]
		if !ok || HeaderValue(l, HeaderDLQReason) == "" || HeaderValue(l, HeaderDLQTopic) != topic {
			t.Errorf("dead letter %q: reason %q source %q", l.Value, HeaderValue(l, HeaderDLQReason), HeaderValue(l, HeaderDLQTopic))
		}
		delete(sources, string(l.Value))
	}
	// All three name task 401. The control topic's poison may be counted
	// after the data topic completed the task: topics are not ordered.
	waitFor(t, "3 dead letters of task 401", func() bool { return h.progress(t, 401).DeadLetteredRecords == 3 })
	if p := h.progress(t, 401); p.ProcessedTweets != 5 || p.Status != crawl.ProgressCompleted {
		t.Fatalf("progress = %+v", p)
	}
	if n := h.recorded(testTopics.Data, resultDeadLettered) + h.recorded(testTopics.Control, resultDeadLettered); n != 3 {
		t.Fatalf("dead_lettered metric = %d, want 3", n)
	}
	if n := h.counter("taskloom_crawl_completions_total"); n != 1 {
		t.Fatalf("completions metric = %d, want 1", n)
	}
}

// Every poison record is delivered twice (the first member dies before its
// commits land): one naming task 701 is counted once against it, and one
// that names no readable task is counted against no task at all.
func TestConsumerDeadLettersCountOncePerTask(t *testing.T) {
	h := newKafkaHarness(t, 1)
	h.failCommit.Store(true)
	stop := h.startConsumer(t)
	tweet := fakeCrawlRecords(t, crawler.Crawl{OriginalTaskID: 701, Tweets: 1})
	poison := []*kgo.Record{
		{Topic: testTopics.Data, Value: []byte(`{"original_task_id": 701, "tweet_data": `)},
		{Topic: testTopics.Data, Value: []byte(`{"tweet_data": {"id": "1"}}`)},
		{Topic: testTopics.Data, Value: []byte(`{"original_task_id": 70`)},
		{Topic: testTopics.Control, Value: []byte(`{"type":"TASK_DONE","original_task_id":"701","total_tweets":1}`)},
	}
	// Each topic's last record is a good one of task 701, after its poison.
	h.produce(t, poison...)
	h.produce(t, tweet...)
	waitFor(t, "completion", func() bool { return h.notifier.count(701) == 1 })
	if p := h.progress(t, 701); p.DeadLetteredRecords != 2 {
		t.Fatalf("first delivery: progress = %+v, want 2 dead letters", p)
	}
	stop()
	h.failCommit.Store(false)

	h.startConsumer(t)
	// The good records are counted after the poison before them, so their
	// redelivery (a duplicate) means the poison was redelivered too.
	waitFor(t, "redelivery", func() bool {
		return h.recorded(testTopics.Data, string(crawl.ResultDuplicate)) == 1 && h.recorded(testTopics.Control, string(crawl.ResultDuplicate)) == 1
	})
	if n := h.recorded(testTopics.Data, resultDeadLettered) + h.recorded(testTopics.Control, resultDeadLettered); n != 2*len(poison) {
		t.Fatalf("dead_lettered metric = %d, want every delivery (%d)", n, 2*len(poison))
	}
	if p := h.progress(t, 701); p.DeadLetteredRecords != 2 || p.ProcessedTweets != 1 {
		t.Fatalf("after redelivery: progress = %+v, want 2 dead letters", p)
	}
	keys, err := h.rdb.Keys(context.Background(), h.prefix+"task_progress:*").Result()
	if err != nil || len(keys) != 1 || keys[0] != h.store.Key(701) {
		t.Fatalf("progress hashes = %v, %v; want only task 701's", keys, err)
	}
}

// A consumer that restarts cleanly resumes after its committed offsets, even
// when shutdown begins in the middle of a batch: here, the moment the batch
// completing task 501 has notified the workflow and not yet recorded that it
// did. That batch has submitted its reply tasks; cut there, it would be
// redelivered and submit them again.
func TestConsumerCommitsProcessedOffsets(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	h.notifier.onComplete = shutdown
	c := h.consumer(t)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f := crawler.Crawl{OriginalTaskID: 501, Tweets: 20, RepliesPerTweet: 1}
	if _, err := f.Produce(context.Background(), h.producer, testTopics); err != nil {
		t.Fatal(err)
	}
	awaitReturn(t, done, 20*time.Second, "the completion and shutdown")
	h.notifier.onComplete = nil
	h.startConsumer(t)
	g := crawler.Crawl{OriginalTaskID: 502, Tweets: 4, RepliesPerTweet: 1}
	if _, err := g.Produce(context.Background(), h.producer, testTopics); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "second completion", func() bool { return h.notifier.count(502) > 0 })
	time.Sleep(200 * time.Millisecond)
	// 20 + 4 replies: nothing of the first task was submitted again.
	if tasks := h.readTopic(t, testSchedulerTopic, 24); len(tasks) != 24 {
		t.Fatalf("scheduler got %d tasks, want 24", len(tasks))
	}
	if n := h.notifier.count(501); n != 1 {
		t.Fatalf("task 501 completed %d times, want once", n)
	}
}

// hungScheduler never answers, as a dependency that accepted the connection
// and stopped responding.
type hungScheduler struct{ called chan struct{} }

func (s hungScheduler) Submit(ctx context.Context, _ []crawl.ReplyTask) error {
	select {
	case s.called <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// A batch in flight at shutdown gets the grace, not forever: a dependency
// that hangs leaves it cut, unmarked, and the next member counts it once.
func TestConsumerShutdownCutsHungBatchAfterGrace(t *testing.T) {
	h := newKafkaHarness(t, 1)
	proc := h.processor(nil)
	hung := hungScheduler{called: make(chan struct{}, 1)}
	proc.Scheduler = hung
	const grace = 300 * time.Millisecond
	c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics, ShutdownGrace: grace}, proc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, shutdown := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	h.produce(t, fakeCrawlRecords(t, crawler.Crawl{OriginalTaskID: 801, Tweets: 3, RepliesPerTweet: 1})...)
	select {
	case <-hung.called:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for a batch in flight")
	}
	began := time.Now()
	shutdown()
	awaitReturn(t, done, 10*time.Second, "a shutdown that a hung dependency may delay only by its grace")
	if took := time.Since(began); took < grace {
		t.Fatalf("shutdown took %v: the batch in flight did not get its grace (%v)", took, grace)
	}
	h.startConsumer(t)
	waitFor(t, "completion by the next member", func() bool { return h.notifier.count(801) == 1 })
	if p := h.progress(t, 801); p.ProcessedTweets != 3 || p.DuplicateTweets != 0 {
		t.Fatalf("progress = %+v", p)
	}
}

// sizeLimitedScheduler fails any submission above limit, as a dependency
// that times out on large requests would.
type sizeLimitedScheduler struct {
	next  crawl.Scheduler
	limit int
}

func (s sizeLimitedScheduler) Submit(ctx context.Context, tasks []crawl.ReplyTask) error {
	if len(tasks) > s.limit {
		return errors.New("request too large for a slow scheduler")
	}
	return s.next.Submit(ctx, tasks)
}

// A dependency that only copes with small requests still gets everything:
// failed batches are retried at half their size.
func TestConsumerDegradesBatchSize(t *testing.T) {
	h := newKafkaHarness(t, 1)
	proc := h.processor(nil)
	proc.Scheduler = sizeLimitedScheduler{next: proc.Scheduler, limit: 40}
	c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics}, proc)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, c.Run)
	f := crawler.Crawl{OriginalTaskID: 601, Tweets: 300, RepliesPerTweet: 1}
	recs := fakeCrawlRecords(t, f)
	h.produce(t, recs...) // one partition, one poll: a 300-record batch first
	waitFor(t, "completion through small batches", func() bool { return h.notifier.count(601) == 1 })
	if p := h.progress(t, 601); p.ProcessedTweets != 300 {
		t.Fatalf("progress = %+v", p)
	}
	if n := h.counter("taskloom_crawl_batch_retries_total"); n == 0 {
		t.Fatal("no batch was retried smaller")
	}
}
