package crawlkafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/crawlprom"
)

// Processor turns a batch of records of one partition into dead letters and
// reply tasks (Prepare), then counts them (Count). Every step is safe to
// repeat, so a failed half is retried.
type Processor struct {
	Topics      crawl.Topics
	Store       crawl.ProgressCounter
	Scheduler   crawl.Scheduler
	DeadLetters DeadLetterSink
	Workflows   crawl.WorkflowNotifier
	Log         *slog.Logger
	// Metrics may be nil.
	Metrics *crawlprom.Metrics
}

// resultDeadLettered is the result of every dead-lettered record, each
// delivery counted (the script's ResultDeadLettered counts distinct ones,
// and only those naming a task).
const resultDeadLettered = string(crawl.ResultDeadLettered)

// Validate reports a missing dependency at startup rather than on the first record.
func (p *Processor) Validate() error {
	switch {
	case p.Topics.Control == "" || p.Topics.Data == "":
		return errors.New("crawl processor: both topics are required")
	case p.Store == nil:
		return errors.New("crawl processor: progress store is required")
	case p.Scheduler == nil:
		return errors.New("crawl processor: scheduler is required")
	case p.DeadLetters == nil:
		return errors.New("crawl processor: dead-letter sink is required")
	case p.Workflows == nil:
		return errors.New("crawl processor: workflow notifier is required")
	case p.Log == nil:
		return errors.New("crawl processor: logger is required")
	}
	return nil
}

// Prepare is a partition batch's first half, in offset order: rejected
// records go to the dead-letter topic and replies go to the scheduler. It
// returns the updates Count applies: every tweet and TASK_INIT, and the dead
// letters that name their task (in offset order too, which the script's
// redelivery check needs). Only the script knows whether a tweet is a copy,
// so a copy's replies are submitted too; they carry the original's
// idempotency keys (ReplyKey) and the scheduler drops them. Prepare may be
// repeated: the dead letters and replies it sends again are copies the
// script and the scheduler tell apart.
func (p *Processor) Prepare(ctx context.Context, recs []*kgo.Record) ([]crawl.Update, error) {
	var (
		letters []DeadLetter
		// Sized for the common batch: every record a tweet with two replies.
		tasks   = make([]crawl.ReplyTask, 0, 2*len(recs))
		updates = make([]crawl.Update, 0, len(recs))
		err     error
	)
	for _, r := range recs {
		var u crawl.Update
		u, tasks, err = p.parse(r, tasks)
		if err != nil {
			letters = append(letters, DeadLetter{Record: r, Reason: err.Error()})
			if id, ok := crawl.NamedTaskID(r.Value); ok {
				updates = append(updates, crawl.Update{TaskID: id, Coord: coordinatesOf(r), DeadLetter: true})
			}
			continue
		}
		updates = append(updates, u)
	}
	if err := p.DeadLetters.Send(ctx, letters); err != nil {
		return nil, err
	}
	for _, l := range letters {
		p.Metrics.Records(l.Record.Topic, resultDeadLettered, 1)
		p.Log.Warn("crawl record dead-lettered", "topic", l.Record.Topic, "partition", l.Record.Partition,
			"offset", l.Record.Offset, "reason", l.Reason)
	}
	if err := p.Scheduler.Submit(ctx, tasks); err != nil {
		return nil, err
	}
	return updates, nil
}

// Count is a batch's second half, once Prepare succeeded for it: its
// updates are counted and the workflows told of completions and new tasks.
// Updates must come in offset order per partition, after every earlier
// record of their partitions was counted. A nil error means the batch's
// records may be marked for commit; a failed Count may be repeated (what
// was counted comes back as duplicates).
func (p *Processor) Count(ctx context.Context, updates []crawl.Update) error {
	outcomes, err := p.Store.ApplyBatch(ctx, updates)
	if err != nil {
		return err
	}
	var counts recordCounts
	defer counts.flush(p.Metrics)
	for i, o := range outcomes {
		if updates[i].DeadLetter {
			continue // in the metric with its letter above; never completes a task
		}
		counts.add(updates[i].Coord.Topic, o.Result)
		if err := p.notify(ctx, updates[i], o); err != nil {
			return err
		}
	}
	return nil
}

// recordCounts adds up a batch's records per topic and result, so that the
// records metric is updated once per pair, not once per record.
type recordCounts struct {
	keys []recordKey
	ns   []int
}

type recordKey struct {
	topic  string
	result crawl.Result
}

func (c *recordCounts) add(topic string, result crawl.Result) {
	k := recordKey{topic, result}
	for i := range c.keys {
		if c.keys[i] == k {
			c.ns[i]++
			return
		}
	}
	c.keys, c.ns = append(c.keys, k), append(c.ns, 1)
}

func (c *recordCounts) flush(m *crawlprom.Metrics) {
	for i, k := range c.keys {
		m.Records(k.topic, string(k.result), c.ns[i])
	}
}

// notify tells the workflow about completions and, for a TASK_INIT that did
// not complete the task, that the task exists. A redelivered TASK_INIT
// announces again (a no-op for an existing workflow), so an announcement
// lost to a failed batch is made on the retry.
func (p *Processor) notify(ctx context.Context, u crawl.Update, o crawl.Outcome) error {
	switch {
	case o.Completer:
		return p.complete(ctx, u, o)
	case u.Init && o.Progress.Status != crawl.ProgressCompleted:
		if err := p.Workflows.TaskAnnounced(ctx, u.TaskID); err != nil {
			return fmt.Errorf("announce crawl task %d: %w", u.TaskID, err)
		}
	}
	return nil
}

func coordinatesOf(r *kgo.Record) crawl.Coordinates {
	return crawl.Coordinates{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
}

// parse reads one record and appends its reply tasks to tasks.
func (p *Processor) parse(r *kgo.Record, tasks []crawl.ReplyTask) (crawl.Update, []crawl.ReplyTask, error) {
	coord := coordinatesOf(r)
	switch r.Topic {
	case p.Topics.Control:
		m, err := crawl.ParseTaskControl(r.Value)
		if err != nil {
			return crawl.Update{}, tasks, err
		}
		return crawl.Update{TaskID: m.OriginalTaskID, Coord: coord, Init: true, TotalTweets: m.TotalTweets}, tasks, nil
	case p.Topics.Data:
		m, err := crawl.ParseRawScrapedData(r.Value)
		if err != nil {
			return crawl.Update{}, tasks, err
		}
		return crawl.Update{TaskID: m.OriginalTaskID, Coord: coord, TweetID: m.TweetData.ID}, crawl.AppendReplyTasks(tasks, m), nil
	default:
		return crawl.Update{}, tasks, fmt.Errorf("%w: record from unexpected topic %q", crawl.ErrInvalidMessage, r.Topic)
	}
}

func (p *Processor) complete(ctx context.Context, u crawl.Update, o crawl.Outcome) error {
	c := crawl.Completion{OriginalTaskID: u.TaskID, Progress: o.Progress, CompletedBy: u.Coord}
	if err := p.Workflows.TaskCompleted(ctx, c); err != nil {
		return fmt.Errorf("notify completion of crawl task %d: %w", u.TaskID, err)
	}
	if err := p.Store.MarkSignaled(ctx, u.TaskID); err != nil {
		return err
	}
	p.Metrics.Completed()
	p.Log.Info("crawl task completed", "original_task_id", u.TaskID,
		"total_tweets", o.Progress.TotalTweets, "processed_tweets", o.Progress.ProcessedTweets, "completed_by", u.Coord.String())
	return nil
}
