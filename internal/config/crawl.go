package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Crawl is the crawl subsystem's configuration (docs/crawl.md "Crawl progress"). The
// input topic names default to the crawler's contract; change them only if the
// crawler does.
type Crawl struct {
	// Topic of the crawler's `TaskControlMessage` (`type` must be `TASK_INIT`). The name the crawler's
	// contract fixes; change it only if the crawler does.
	ControlTopic string `env:"CRAWL_CONTROL_TOPIC" envDefault:"task_control_topic"`
	// Topic of the crawler's `RawScrapedDataMessage`, one tweet per record.
	DataTopic string `env:"CRAWL_DATA_TOPIC" envDefault:"x_com_scraped_data"`
	// Records that can never be processed (invalid JSON, wrong type, missing field), unchanged, with
	// headers `dlq_reason`, `dlq_source_topic`, `dlq_source_partition`, `dlq_source_offset`.
	DeadLetterTopic string `env:"CRAWL_DEAD_LETTER_TOPIC" envDefault:"crawl_dead_letter"`
	// Where every reply is handed to the downstream task scheduler (one JSON record per reply, keyed
	// by tweet id, header `idempotency_key` = `crawl:<original_task_id>:<tweet id>:<reply index>`, so
	// a redelivered record and a copy of a tweet repeat the original's keys and the scheduler can drop
	// them). A tweet is counted only after all its replies are acknowledged.
	SchedulerTopic string `env:"CRAWL_SCHEDULER_TOPIC" envDefault:"task_scheduler_replies"`
	// Kafka consumer group of the two consumers (all worker replicas share it).
	ConsumerGroup string `env:"CRAWL_CONSUMER_GROUP" envDefault:"taskloom-crawl"`
	// Run the consumers inside the worker process. Without `KAFKA_BROKERS` they are skipped with a
	// warning.
	Consumers bool `env:"CRAWL_CONSUMERS" envDefault:"true"`
	// Records of one partition that share a scheduler produce and a pass through Redis (one counting
	// script call per task in the batch, at most 1,000 records a call), 1–10000. Each partition is
	// counted by a goroutine of its own, its batches in order: a poll takes up to 16 batches' worth of
	// records over all partitions, hands each partition's share to its goroutine (waiting only while
	// that one still has an earlier poll queued) and polls again, so a slow partition holds up none of
	// the others. A rebalance waits until a revoked partition's batch in flight has finished (what is
	// queued behind it is left for the next owner), so two members never count one partition at once.
	// A partition prepares its next batch (decoding, dead letters, replies produced and acknowledged)
	// while the current one is counted in Redis; batches are counted and committed in order, each only
	// after its own replies were acknowledged. A fetch takes at most 256 KiB of each partition, so a
	// poll usually spans several partitions. A failed batch (its preparing or its counting) is retried
	// at half its size (down to 1), so a slow dependency gets smaller requests; successes grow it
	// back.
	BatchSize int `env:"CRAWL_BATCH_SIZE" envDefault:"500"`

	// Crawler command template, split like a shell would (quotes, backslash) but run without one.
	// `{id}` = original task id (required), `{brokers}` = `KAFKA_BROKERS`, `{self}` = the binary
	// running the worker. E.g. `docker run --rm crawl4ai python crawlers/x_com/production_crawler.py
	// --original-task-id {id}`. Empty outside dev: tasks fail with "no crawler configured". Default: –
	// (dev: `{self} crawl fake-crawler --original-task-id {id} --tweets 450 --brokers {brokers}`,
	// `{self}` being the dev binary).
	CrawlerCommand string `env:"CRAWL_CRAWLER_COMMAND"`
	// Longest crawler run; the run heartbeats every 5 s and is killed (whole process group) when the
	// activity is cancelled or times out.
	CrawlerTimeout time.Duration `env:"CRAWL_CRAWLER_TIMEOUT" envDefault:"2h"`
	// After the crawler exits, how long to wait for `processed_tweets == total_tweets` before the task
	// is `Failed` with the missing count (and the hash's `status` becomes `FAILED`).
	CompletionDeadline time.Duration `env:"CRAWL_COMPLETION_DEADLINE" envDefault:"1h"`
	// Lifetime of a `task_progress:{id}` hash once it is `COMPLETED` or `FAILED`.
	ProgressTTL time.Duration `env:"CRAWL_PROGRESS_TTL" envDefault:"168h"`
	// Lifetime of a hash that never completes, counted from its last record.
	ProgressIdleTTL time.Duration `env:"CRAWL_PROGRESS_IDLE_TTL" envDefault:"720h"`
}

// kafkaTopicName is Kafka's legal topic name alphabet and length.
var kafkaTopicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

func (c *Crawl) validate() error {
	var errs []error
	topics := map[string]string{
		"CRAWL_CONTROL_TOPIC": c.ControlTopic, "CRAWL_DATA_TOPIC": c.DataTopic,
		"CRAWL_DEAD_LETTER_TOPIC": c.DeadLetterTopic, "CRAWL_SCHEDULER_TOPIC": c.SchedulerTopic,
	}
	seen := map[string]string{}
	for _, name := range []string{"CRAWL_CONTROL_TOPIC", "CRAWL_DATA_TOPIC", "CRAWL_DEAD_LETTER_TOPIC", "CRAWL_SCHEDULER_TOPIC"} {
		v := topics[name]
		if !kafkaTopicName.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s: %q is not a Kafka topic name", name, v))
		}
		if other, dup := seen[v]; dup {
			errs = append(errs, fmt.Errorf("%s: %q is also %s", name, v, other))
		}
		seen[v] = name
	}
	if c.ConsumerGroup == "" {
		errs = append(errs, errors.New("CRAWL_CONSUMER_GROUP: must not be empty"))
	}
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		errs = append(errs, fmt.Errorf("CRAWL_BATCH_SIZE: %d must be between 1 and 10000", c.BatchSize))
	}
	if c.CrawlerCommand != "" && !strings.Contains(c.CrawlerCommand, "{id}") {
		errs = append(errs, errors.New("CRAWL_CRAWLER_COMMAND: must pass {id} (the crawler's --original-task-id)"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"CRAWL_CRAWLER_TIMEOUT", c.CrawlerTimeout}, {"CRAWL_COMPLETION_DEADLINE", c.CompletionDeadline},
		{"CRAWL_PROGRESS_TTL", c.ProgressTTL}, {"CRAWL_PROGRESS_IDLE_TTL", c.ProgressIdleTTL},
	} {
		if d.v < time.Second {
			errs = append(errs, fmt.Errorf("%s: %s must be at least 1s", d.name, d.v))
		}
	}
	return errors.Join(errs...)
}
