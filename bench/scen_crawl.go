package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawlkafka"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// benchCrawl: tweets counted per second — the crawler's records sent to the broker (encoded
// before the clock starts: encoding is the crawler's work, not taskloom's), the worker's
// consumers (parse, reply tasks, Redis count) and the completion signal reaching the task's
// CrawlTaskWorkflow — against a bare franz-go group consumer that only consumes and commits the
// same records from the same broker. The one-off cost after the last tweet (completion signal to
// the workflow closed Completed) is timed apart and reported in the notes, with the end-to-end
// figure that includes it.
func benchCrawl(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "crawl", Unit: "tweets"}
	cfg := r.stack.cfg.Crawl
	topics := crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic}
	tweets := r.size(20000, 1000)
	f := crawler.Crawl{OriginalTaskID: time.Now().UnixNano() % 1_000_000_000, Tweets: tweets, RepliesPerTweet: 2}
	recs, err := f.Records(topics)
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(r.stack.cfg.Kafka.Brokers...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	defer producer.Close()

	m := r.meter(ctx)
	start := time.Now()
	total, err := f.Send(ctx, producer, recs)
	if err != nil {
		res.Skipped = err.Error()
		return []Result{res}
	}
	sent := time.Since(start)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	id := crawlwf.WorkflowID(f.OriginalTaskID)
	var state crawlwf.State
	if err := waitWorkflow(wctx, r, id, &state); err != nil {
		res.Skipped = "crawl task did not complete: " + err.Error()
		return []Result{res}
	}
	closed := time.Since(start)
	if state.Status != crawl.Completed || state.ProcessedTweets != total {
		res.Skipped = fmt.Sprintf("crawl task ended %s with %d of %d tweets", state.Status, state.ProcessedTweets, total)
		return []Result{res}
	}
	signaled, closedAt, err := completionTimes(ctx, r, id)
	if err != nil {
		res.Skipped = "read the crawl task's history: " + err.Error()
		return []Result{res}
	}
	counted := signaled.Sub(start)
	res.N = int(total)
	res.Throughput = float64(total) / counted.Seconds()
	m.charge(ctx, &res)
	res.Notes = fmt.Sprintf("%d tweets x 2 replies, 4 partitions; processed == total exactly; window = first record sent "+
		"to the completion signal recorded: %s (records all on the broker after %s); fixed cost after it, signal to "+
		"workflow closed: %s; end to end incl. that: %s, %.0f tweets/s",
		total, dur(counted), dur(sent), dur(closedAt.Sub(signaled)), dur(closed), float64(total)/closed.Seconds())

	rawStart := time.Now()
	if err := rawConsume(ctx, r.stack.cfg.Kafka.Brokers, topics.Data, total); err != nil {
		res.Baseline = "raw consume+commit failed: " + err.Error()
		return []Result{res}
	}
	b := baseline{name: "franz-go consume+commit only", tput: float64(total) / time.Since(rawStart).Seconds()}
	b.apply(&res)
	return []Result{res}
}

// completionTimes reads from a crawl task's history when the completion signal was recorded and
// when the workflow closed (the Temporal server's clock, the same machine's).
func completionTimes(ctx context.Context, r *run, id string) (signaled, closed time.Time, err error) {
	it := r.p.Temporal.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return signaled, closed, err
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == crawlwf.SignalCompleted && signaled.IsZero() {
				signaled = e.GetEventTime().AsTime()
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			closed = e.GetEventTime().AsTime()
		}
	}
	if signaled.IsZero() || closed.IsZero() {
		return signaled, closed, fmt.Errorf("%s has no %s signal or did not complete", id, crawlwf.SignalCompleted)
	}
	return signaled, closed, nil
}

func dur(d time.Duration) string { return d.Round(time.Millisecond).String() }

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
// starts it when it reads TASK_INIT): it asks every 5 ms until the workflow exists, then waits
// on its result (a long poll, so its end is seen when it happens).
func waitWorkflow(ctx context.Context, r *run, id string, out any) error {
	for {
		err := r.p.Temporal.GetWorkflow(ctx, id, "").Get(ctx, out)
		var notFound *serviceerror.NotFound
		if err == nil || !errors.As(err, &notFound) || ctx.Err() != nil {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
