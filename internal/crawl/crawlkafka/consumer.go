// Package crawlkafka is the crawl subsystem's Kafka side: the group consumer of the crawler's
// two topics, the per-partition batch processing (dead letters, reply tasks to the scheduler
// topic, counting through crawl.ProgressCounter, telling the workflows through
// crawl.WorkflowNotifier) and the producers of reply tasks and dead letters.
package crawlkafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
)

// Consumer defaults.
const (
	ConsumerGroupDefault = "taskloom-crawl"
	// BatchSizeDefault bounds how many records of one partition share a
	// scheduler produce and a pass through Redis: one counting script call
	// per task of the batch, carrying all of that task's records.
	BatchSizeDefault = 500
	// pollBatches bounds one poll at this many batches (over all
	// partitions). A larger poll drains what the client has buffered
	// sooner, so its next fetch runs while the records are counted (4
	// batches a poll measured 49–60k tweets/s in the bench's crawl row, 16
	// measured 70–74k, interleaved, when a poll was processed whole before
	// the next). A partition's worker holds at most two polls' share (one
	// in flight, one queued), and a rebalance waits for its batch in
	// flight: a fraction of a second.
	pollBatches = 16
	// fetchPartitionBytes caps one partition's share of a fetch (Kafka's
	// max.partition.fetch.bytes, 1 MiB by default). A poll takes records in
	// the fetch's partition order: at 1 MiB one partition's compressed share
	// filled a whole poll (8,000 of the bench's records), so the partitions
	// were fed one at a time. At 256 KiB a poll spans 2–3 of 4 partitions:
	// 63–66k tweets/s in the bench's crawl row against 47–53k, three runs
	// each, interleaved, when a poll was processed whole before the next
	// (128 KiB was no better).
	fetchPartitionBytes = 256 << 10
	retryMinDefault     = 100 * time.Millisecond
	retryMaxDefault     = 5 * time.Second
	shutdownCommit      = 10 * time.Second
	// ShutdownGraceDefault is how long a batch in flight when shutdown
	// begins may take to finish its writes (a batch of 500 takes
	// milliseconds; the rest is for a slow dependency).
	ShutdownGraceDefault = 10 * time.Second
)

// ConsumerConfig configures the group consumer of both crawl topics.
type ConsumerConfig struct {
	Brokers []string
	Group   string
	Topics  crawl.Topics
	// BatchSize bounds one partition's batch (BatchSizeDefault when 0).
	BatchSize int
	// ShutdownGrace bounds the batches in flight at shutdown
	// (ShutdownGraceDefault when 0); past it they are cut and redelivered.
	ShutdownGrace time.Duration
	// ExtraOpts are appended to the client options (tests shorten timeouts).
	ExtraOpts []kgo.Opt
}

// Consumer reads task_control_topic and x_com_scraped_data in one consumer
// group, each partition counted by a goroutine of its own
// (partitionWorkers). Offsets are committed only for records that were
// processed: records are marked once counted, marks are autocommitted and
// committed again when partitions are revoked, after their workers stopped.
// A rebalance waits for the poll loop to hand a poll's records over
// (BlockRebalanceOnPoll) and then for the revoked partitions' batches in
// flight, so two members never count one partition at once; the script's
// dedupe covers redelivery after a crash.
type Consumer struct {
	cl        *kgo.Client
	proc      *Processor
	log       *slog.Logger
	workers   *partitionWorkers
	batchSize int
	grace     time.Duration
}

// NewConsumer joins the group lazily: nothing is fetched until Run polls.
func NewConsumer(cfg ConsumerConfig, proc *Processor) (*Consumer, error) {
	if err := proc.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("crawl consumer: no Kafka brokers")
	}
	if cfg.Group == "" {
		cfg.Group = ConsumerGroupDefault
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = BatchSizeDefault
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = ShutdownGraceDefault
	}
	c := &Consumer{proc: proc, log: proc.Log, batchSize: cfg.BatchSize, grace: cfg.ShutdownGrace}
	c.workers = newPartitionWorkers(c.processPartition)
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics.Control, cfg.Topics.Data),
		kgo.AutoCommitMarks(),
		kgo.FetchMaxPartitionBytes(fetchPartitionBytes),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(c.revoked),
		kgo.OnPartitionsLost(c.lost),
	}, cfg.ExtraOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("crawl consumer client: %w", err)
	}
	c.cl = cl
	return c, nil
}

// revoked stops the revoked partitions' workers, then commits what they
// counted, before another member may take the partitions over.
func (c *Consumer) revoked(ctx context.Context, cl *kgo.Client, partitions map[string][]int32) {
	c.workers.stop(partitions)
	if err := cl.CommitMarkedOffsets(ctx); err != nil {
		c.log.Warn("crawl consumer: commit on revoke failed; those records will be redelivered and deduplicated", "err", err)
	}
}

// lost stops the lost partitions' workers; nothing can be committed for
// them any more, so what they counted is redelivered and deduplicated.
func (c *Consumer) lost(_ context.Context, _ *kgo.Client, partitions map[string][]int32) {
	c.workers.stop(partitions)
}

// Run consumes until ctx ends, then commits what was processed and leaves
// the group. It returns nil on a normal shutdown. A batch in flight when ctx
// ends is finished, not cut between its writes: cut after submitting its
// reply tasks, it would be redelivered and submit them again.
func (c *Consumer) Run(ctx context.Context) error {
	defer c.close()
	work, stopWork := withGrace(ctx, c.grace)
	defer stopWork()
	defer c.workers.stopAll() // first: the batches in flight finish under work
	for {
		fetches := c.cl.PollRecords(ctx, c.batchSize*pollBatches)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			c.cl.AllowRebalance()
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			c.log.Warn("crawl consumer: fetch error", "topic", topic, "partition", partition, "err", err)
		})
		for _, recs := range byPartition(fetches) {
			c.workers.feed(ctx, work, recs)
		}
		c.cl.AllowRebalance()
	}
}

// byPartition groups a poll's records per topic-partition, in offset order.
// One goroutine per partition must see all of its records: the progress
// script's dedupe relies on each partition being counted in order, and a
// partition can appear in two fetches of one poll after a leader change.
func byPartition(fetches kgo.Fetches) [][]*kgo.Record {
	index := map[topicPartition]int{}
	var out [][]*kgo.Record
	fetches.EachRecord(func(r *kgo.Record) {
		k := topicPartition{r.Topic, r.Partition}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	})
	return out
}

// processPartition runs one partition's records in bounded batches, in
// offset order, in two stages that overlap: while one batch is counted in
// Redis, the next is parsed and its replies submitted (Processor.Prepare,
// then Processor.Count), so a partition waits for Redis and for the
// scheduler's acknowledgements at the same time instead of one after the
// other. A batch is counted only after its replies were acknowledged, and
// batches are counted and marked in order. A failure in either stage is a
// dependency being down or slow (malformed records never fail), so waiting
// is right; skipping would lose counts. Batches run under work, which
// outlives ctx by the shutdown grace; once ctx ends no new batch is
// prepared, and every batch already prepared (its replies submitted) is
// still counted, so a shutdown does not submit them twice.
func (c *Consumer) processPartition(ctx, work context.Context, recs []*kgo.Record) {
	prepared := make(chan preparedBatch)
	go c.prepareAll(ctx, work, recs, prepared)
	cut := false
	for b := range prepared {
		// Once a batch is given up, the ones prepared after it are not
		// counted either (counting is in order): all stay unmarked and are
		// redelivered.
		cut = cut || !c.countBatch(ctx, work, b)
	}
}

// preparedBatch is a batch whose dead letters and replies are out: what is
// left is to count it and mark its records.
type preparedBatch struct {
	recs    []*kgo.Record
	updates []crawl.Update
	took    time.Duration // Prepare's, for the batch metric
}

// prepareAll prepares recs in batches and hands each to out, which it closes
// when done or when ctx ends. A failed batch is retried at half its size: a
// dependency that timed out on a large batch gets smaller ones instead of
// the same work again on top of what it is still doing. Successes grow the
// size back.
func (c *Consumer) prepareAll(ctx, work context.Context, recs []*kgo.Record, out chan<- preparedBatch) {
	defer close(out)
	size, wait := c.batchSize, retryMinDefault
	for len(recs) > 0 && ctx.Err() == nil {
		batch := recs[:min(size, len(recs))]
		start := time.Now()
		updates, err := c.proc.Prepare(work, batch)
		if err == nil {
			out <- preparedBatch{recs: batch, updates: updates, took: time.Since(start)}
			recs = recs[len(batch):]
			size, wait = min(2*size, c.batchSize), retryMinDefault
			continue
		}
		size = max(1, len(batch)/2)
		if !c.retryAfter(ctx, wait, "prepare", coordinatesOf(batch[0]), len(batch), size, err) {
			return // shutting down: the batch stays unmarked and is redelivered
		}
		wait = min(2*wait, retryMaxDefault)
	}
}

// countBatch counts a prepared batch and marks its records, retrying a
// failure at half its updates (a slow Redis running a 500-record script
// call past its read timeout gets smaller ones). It reports false when it
// gave up because ctx ended.
func (c *Consumer) countBatch(ctx, work context.Context, b preparedBatch) bool {
	start := time.Now()
	updates, size, wait := b.updates, len(b.updates), retryMinDefault
	for len(updates) > 0 {
		part := updates[:min(size, len(updates))]
		err := c.proc.Count(work, part)
		if err == nil {
			updates = updates[len(part):]
			size, wait = min(2*size, len(b.updates)), retryMinDefault
			continue
		}
		size = max(1, len(part)/2)
		if !c.retryAfter(ctx, wait, "count", part[0].Coord, len(part), size, err) {
			return false
		}
		wait = min(2*wait, retryMaxDefault)
	}
	c.proc.Metrics.Batch(b.took + time.Since(start))
	c.cl.MarkCommitRecords(b.recs...)
	return true
}

// retryAfter logs a failed stage and waits before its retry; it reports
// false, without waiting, once ctx has ended.
func (c *Consumer) retryAfter(ctx context.Context, wait time.Duration, stage string, at crawl.Coordinates, n, next int, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	c.proc.Metrics.Retried()
	c.log.Warn("crawl consumer: batch failed, retrying smaller", "stage", stage, "topic", at.Topic, "partition", at.Partition,
		"offset", at.Offset, "records", n, "next_records", next, "retry_in", wait, "err", err)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(wait):
		return true
	}
}

// withGrace returns a context that ends grace after ctx does, or when the
// returned cancel is called.
func withGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return work, func() { stop(); cancel() }
}

func (c *Consumer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownCommit)
	defer cancel()
	if err := c.cl.CommitMarkedOffsets(ctx); err != nil {
		c.log.Warn("crawl consumer: final commit failed; records will be redelivered and deduplicated", "err", err)
	}
	c.cl.CloseAllowingRebalance()
}
