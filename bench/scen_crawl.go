package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/actions"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawlkafka"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// benchCrawl: tweets counted per second — the crawler's records sent to the broker (encoded
// before the clock starts: encoding is the crawler's work, not taskloom's), the worker's
// consumers (parse, reply tasks, Redis count) and the completion signal reaching the task's
// CrawlTaskWorkflow — against a bare franz-go group consumer that only consumes and commits the
// same records sent the same way to the same broker, timed over the same window (rawAsSent); the
// notes add that consumer on records already on the broker. The one-off cost after the last
// tweet (completion signal to the workflow closed Completed) is timed apart and reported in the
// notes, with the end-to-end figure that includes it.
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
	cpu := r.cpuUse()
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
	cpuPer := r.cpuUse().perUnitMicros(cpu, int(total))
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
		"workflow closed: %s; end to end incl. that: %s, %.0f tweets/s; CPU per tweet, first record sent to workflow closed: %s",
		total, dur(counted), dur(sent), dur(closedAt.Sub(signaled)), dur(closed), float64(total)/closed.Seconds(), cpuPer)

	raw, err := rawAsSent(ctx, r.stack.cfg.Kafka.Brokers, producer, topics.Data, recs)
	if err != nil {
		res.Baseline = "raw consume+commit failed: " + err.Error()
		return []Result{res}
	}
	b := baseline{name: "franz-go consume+commit only, same window", tput: float64(total) / raw.Seconds()}
	b.apply(&res)
	loadedStart := time.Now()
	if err := rawConsume(ctx, r.stack.cfg.Kafka.Brokers, topics.Data, total); err != nil {
		res.Baseline = "raw consume+commit failed: " + err.Error()
		return []Result{res}
	}
	loaded := float64(total) / time.Since(loadedStart).Seconds()
	res.Notes += fmt.Sprintf("; baseline: the same %d tweet records sent into a topic of their own (as many partitions) to a bare "+
		"group consumer already assigned, first record sent to the last committed: %s; the same consumer on records already on the "+
		"broker (no sending in its window): %.0f tweets/s, %.2fx", total, dur(raw), loaded, res.Throughput/loaded)
	return []Result{res}
}

// completionTimes reads from a crawl task's history when the completion signal was recorded and
// when the workflow closed (the Temporal server's clock, the same machine's).
func completionTimes(ctx context.Context, r *run, id string) (signaled, closed time.Time, err error) {
	events, err := actions.Events(ctx, r.p.Temporal, id, "")
	if err != nil {
		return signaled, closed, err
	}
	for _, e := range events {
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

// rawAsSent is the baseline, timed as the crawl row is: a bare franz-go group consumer that
// only marks and commits, already assigned its partitions (as the worker's consumers are), and
// the same tweet records sent as the fake crawler sends them, into a topic of their own with as
// many partitions, by the crawler's producer. It returns the time from the first record sent to
// the last one committed.
// Without the sending in its window (rawConsume) the baseline would time something the crawl
// row cannot skip: the records arriving.
func rawAsSent(ctx context.Context, brokers []string, producer *kgo.Client, dataTopic string, recs []*kgo.Record) (time.Duration, error) {
	topic := "bench-raw-" + suffix()
	var copies []*kgo.Record
	for _, rec := range recs {
		if rec.Topic != dataTopic {
			continue // TASK_INIT: the crawl's control record, not a tweet
		}
		copies = append(copies, &kgo.Record{Topic: topic, Key: rec.Key, Value: rec.Value})
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	assigned := make(chan struct{})
	var once sync.Once
	cl, err := rawConsumer(brokers, topic, kgo.AllowAutoTopicCreation(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, got map[string][]int32) {
			if len(got[topic]) > 0 {
				once.Do(func() { close(assigned) })
			}
		}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	done := make(chan error, 1)
	go func() { done <- consumeAll(ctx, cl, int64(len(copies))) }()
	select {
	case <-assigned:
	case err := <-done:
		return 0, fmt.Errorf("raw consumer stopped before it was assigned: %w", err)
	case <-ctx.Done():
		return 0, fmt.Errorf("raw consumer not assigned its partitions: %w", ctx.Err())
	}
	start := time.Now()
	if err := producer.ProduceSync(ctx, copies...).FirstErr(); err != nil {
		return 0, fmt.Errorf("send the baseline's records: %w", err)
	}
	if err := <-done; err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// rawConsume is a new group member that polls the data topic from the start, marks every
// record and commits, doing nothing else: the consumer alone, on records already on the broker.
func rawConsume(ctx context.Context, brokers []string, topic string, want int64) error {
	cl, err := rawConsumer(brokers, topic)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return consumeAll(ctx, cl, want)
}

// rawConsumer is a bare member of a group of its own on topic that commits what it marks.
func rawConsumer(brokers []string, topic string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("bench-raw-" + suffix()),
		kgo.ConsumeTopics(topic), kgo.AutoCommitMarks(), kgo.FetchMaxWait(50 * time.Millisecond)}, opts...)...)
}

// consumeAll polls cl until want records came, marks them and commits.
func consumeAll(ctx context.Context, cl *kgo.Client, want int64) error {
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
