package crawlkafka

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
)

// A crawler (or its producer) sends tweets twice; a copy has the tweet's id
// at a new offset. The task completes only once every
// distinct tweet was processed, processed_tweets == total_tweets, and the
// copies' replies carry the original's idempotency keys.

const copyTweets = 200

// crawlRecords is a crawl without copies: its TASK_INIT and its tweets, each
// tweet on partition i%testPartitions (for a producer that honours it).
func crawlRecords(t *testing.T, task int64, replies int) (*kgo.Record, []*kgo.Record) {
	t.Helper()
	recs := fakeCrawlRecords(t, crawler.Crawl{OriginalTaskID: task, Tweets: copyTweets, RepliesPerTweet: replies})
	for i, r := range recs[1:] {
		r.Partition = int32(i % testPartitions)
	}
	return recs[0], recs[1:]
}

// copyOn is the same message again, on partition p.
func copyOn(r *kgo.Record, p int32) *kgo.Record {
	return &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value, Partition: p}
}

// twice sends every record a second time right after the first, on the
// same partition (a producer retry).
func twice(recs []*kgo.Record) []*kgo.Record {
	out := make([]*kgo.Record, 0, 2*len(recs))
	for _, r := range recs {
		out = append(out, r, copyOn(r, r.Partition))
	}
	return out
}

// manualProducer produces every record to the partition it names.
func manualProducer(t *testing.T, h *kafkaHarness) func(recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return func(recs ...*kgo.Record) {
		t.Helper()
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// wantCompletedOnce checks the task's final progress and its one completion.
func wantCompletedOnce(t *testing.T, h *kafkaHarness, task, duplicates int64) {
	t.Helper()
	waitFor(t, "every copy applied", func() bool { return h.progress(t, task).DuplicateTweets == duplicates })
	p := h.progress(t, task)
	if p.ProcessedTweets != copyTweets || p.TotalTweets != copyTweets || p.Status != crawl.ProgressCompleted {
		t.Fatalf("task %d progress = %+v, want %d/%d COMPLETED", task, p, copyTweets, copyTweets)
	}
	if n := h.notifier.count(task); n != 1 {
		t.Fatalf("task %d completed %d times, want once", task, n)
	}
}

func TestCopiesInitFirstCompleteOnlyAtLastDistinctTweet(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	produce := manualProducer(t, h)
	h.startConsumer(t)
	const task = 401
	init, tweets := crawlRecords(t, task, 2)
	produce(init)
	produce(twice(tweets[:copyTweets-1])...)
	waitFor(t, "199 tweets and their copies", func() bool {
		p := h.progress(t, task)
		return p.ProcessedTweets == copyTweets-1 && p.DuplicateTweets == copyTweets-1
	})
	if p := h.progress(t, task); p.Status != crawl.ProgressProcessing || h.notifier.count(task) != 0 {
		t.Fatalf("completed before the last distinct tweet: %+v", p)
	}
	produce(twice(tweets[copyTweets-1:])...)
	waitFor(t, "completion", func() bool { return h.notifier.count(task) > 0 })
	wantCompletedOnce(t, h, task, copyTweets)

	// Replies of a copy carry the same idempotency keys as the original's.
	replies := h.readTopic(t, testSchedulerTopic, 4*copyTweets)
	keys := map[string]int{}
	for _, r := range replies {
		keys[HeaderValue(r, "idempotency_key")]++
	}
	if len(replies) != 4*copyTweets || len(keys) != 2*copyTweets {
		t.Fatalf("%d reply tasks with %d distinct keys, want %d and %d", len(replies), len(keys), 4*copyTweets, 2*copyTweets)
	}
	for k, n := range keys {
		if n != 2 {
			t.Fatalf("key %q handed over %d times, want 2", k, n)
		}
	}
	if want := crawl.ReplyKey(task, string(tweets[0].Key), 1); keys[want] != 2 {
		t.Fatalf("key %q missing from %v...", want, len(keys))
	}
}

func TestCopiesInitLastComplete(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	produce := manualProducer(t, h)
	h.startConsumer(t)
	const task = 402
	init, tweets := crawlRecords(t, task, 1)
	produce(twice(tweets)...)
	waitFor(t, "every tweet and copy", func() bool {
		p := h.progress(t, task)
		return p.ProcessedTweets == copyTweets && p.DuplicateTweets == copyTweets
	})
	if h.notifier.count(task) != 0 {
		t.Fatal("completed without TASK_INIT")
	}
	produce(init)
	waitFor(t, "completion", func() bool { return h.notifier.count(task) > 0 })
	wantCompletedOnce(t, h, task, copyTweets)
}

// Copies land on another partition than their original, interleaved with
// two other tasks' records (and copies).
func TestCopiesOnOtherPartitionsInterleaved(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	produce := manualProducer(t, h)
	h.startConsumer(t)
	tasks := []int64{411, 412, 413}
	var recs []*kgo.Record
	all := make([][]*kgo.Record, len(tasks))
	for i, task := range tasks {
		init, tweets := crawlRecords(t, task, 1)
		recs = append(recs, init)
		all[i] = tweets
	}
	for j := range copyTweets {
		for i := range tasks {
			orig := all[i][j]
			recs = append(recs, orig, copyOn(orig, (orig.Partition+1+int32(i))%testPartitions))
		}
	}
	produce(recs...)
	for _, task := range tasks {
		waitFor(t, "completion", func() bool { return h.notifier.count(task) > 0 })
		wantCompletedOnce(t, h, task, copyTweets)
	}
	// A partition adds to the metric once its batch is counted, which may be
	// after another partition's batch completed the task.
	want := len(tasks) * copyTweets
	waitFor(t, fmt.Sprintf("counted metric %d", want), func() bool {
		return h.recorded(testTopics.Data, string(crawl.ResultCounted)) >= want
	})
	if counted := h.recorded(testTopics.Data, string(crawl.ResultCounted)); counted != want {
		t.Fatalf("counted metric = %d, want %d", counted, want)
	}
}

// Copies arriving after the task completed: nothing more is counted, the
// task completes once, the copies are counted as duplicates.
func TestCopiesAfterCompletion(t *testing.T) {
	h := newKafkaHarness(t, testPartitions)
	produce := manualProducer(t, h)
	h.startConsumer(t)
	const task = 421
	init, tweets := crawlRecords(t, task, 1)
	produce(append([]*kgo.Record{init}, tweets...)...)
	waitFor(t, "completion", func() bool { return h.notifier.count(task) > 0 })
	copies := make([]*kgo.Record, len(tweets))
	for i, r := range tweets {
		copies[i] = copyOn(r, (r.Partition+1)%testPartitions)
	}
	produce(copies...)
	// The copies are consumed after produce returns: wait until all have been seen.
	waitFor(t, "the copies counted as duplicates", func() bool {
		return h.recorded(testTopics.Data, string(crawl.ResultDuplicate)) >= copyTweets
	})
	wantCompletedOnce(t, h, task, copyTweets)
	if d := h.recorded(testTopics.Data, string(crawl.ResultDuplicate)); d != copyTweets {
		t.Fatalf("duplicate metric = %d, want %d", d, copyTweets)
	}
}
