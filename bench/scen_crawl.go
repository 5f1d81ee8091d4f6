package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawlkafka"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// benchCrawl: tweets counted per second end to end — the fake crawler's records on the broker,
// the worker's consumers (parse, reply tasks, Redis count), the completion signal, and
// CrawlTaskWorkflow finished Completed — against a bare franz-go group consumer that only
// consumes and commits the same records from the same broker.
func benchCrawl(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "crawl", Unit: "tweets"}
	cfg := r.stack.cfg.Crawl
	topics := crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic}
	tweets := r.size(20000, 1000)
	f := crawler.Crawl{OriginalTaskID: time.Now().UnixNano() % 1_000_000_000, Tweets: tweets, RepliesPerTweet: 2}
	producer, err := kgo.NewClient(kgo.SeedBrokers(r.stack.cfg.Kafka.Brokers...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	defer producer.Close()

	m := r.meter(ctx)
	start := time.Now()
	total, err := f.Produce(ctx, producer, topics)
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var state crawlwf.State
	if err := waitWorkflow(wctx, r, crawlwf.WorkflowID(f.OriginalTaskID), &state); err != nil {
		res.Skipped = "crawl task did not complete: " + err.Error()
		return []Result{res}
	}
	elapsed := time.Since(start)
	if state.Status != crawl.Completed || state.ProcessedTweets != total {
		res.Skipped = fmt.Sprintf("crawl task ended %s with %d of %d tweets", state.Status, state.ProcessedTweets, total)
		return []Result{res}
	}
	res.N = int(total)
	res.Throughput = float64(total) / elapsed.Seconds()
	m.charge(ctx, &res)
	res.Notes = fmt.Sprintf("%d tweets x 2 replies, 4 partitions; processed == total exactly", total)

	rawStart := time.Now()
	if err := rawConsume(ctx, r.stack.cfg.Kafka.Brokers, topics.Data, total); err != nil {
		res.Baseline = "raw consume+commit failed: " + err.Error()
		return []Result{res}
	}
	b := baseline{name: "franz-go consume+commit only", tput: float64(total) / time.Since(rawStart).Seconds()}
	b.apply(&res)
	return []Result{res}
}

// rawConsume is the baseline: a new group member that polls the data topic from the start,
// marks every record and commits, doing nothing else.
func rawConsume(ctx context.Context, brokers []string, topic string, want int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("bench-raw-"+suffix()),
		kgo.ConsumeTopics(topic), kgo.AutoCommitMarks(), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var got int64
	for got < want {
		fetches := cl.PollRecords(ctx, 4*crawlkafka.BatchSizeDefault)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d: %w", got, want, err)
		}
		recs := fetches.Records()
		cl.MarkCommitRecords(recs...)
		got += int64(len(recs))
	}
	return cl.CommitMarkedOffsets(ctx)
}

// waitWorkflow waits for a workflow that may not have been started yet (the crawl consumer
// starts it with its completion signal).
func waitWorkflow(ctx context.Context, r *run, id string, out any) error {
	for {
		err := r.p.Temporal.GetWorkflow(ctx, id, "").Get(ctx, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
