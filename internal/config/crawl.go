package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Crawl is the crawl subsystem's configuration (README, "Crawl progress"). The
// input topic names default to the crawler's contract; change them only if the
// crawler does.
type Crawl struct {
	ControlTopic string `env:"CRAWL_CONTROL_TOPIC" envDefault:"task_control_topic"`
	DataTopic    string `env:"CRAWL_DATA_TOPIC" envDefault:"x_com_scraped_data"`
	// DeadLetterTopic receives records that can never be processed, with the reason in headers.
	DeadLetterTopic string `env:"CRAWL_DEAD_LETTER_TOPIC" envDefault:"crawl_dead_letter"`
	// SchedulerTopic is where every reply is handed to the downstream task scheduler.
	SchedulerTopic string `env:"CRAWL_SCHEDULER_TOPIC" envDefault:"task_scheduler_replies"`
	ConsumerGroup  string `env:"CRAWL_CONSUMER_GROUP" envDefault:"taskloom-crawl"`
	// Consumers runs the two topic consumers inside the worker process.
	Consumers bool `env:"CRAWL_CONSUMERS" envDefault:"true"`
	// BatchSize bounds how many records of one partition share a produce and a Redis pipeline.
	BatchSize int `env:"CRAWL_BATCH_SIZE" envDefault:"500"`

	// CrawlerCommand is the crawler's command template, split like a shell would but run
	// without one: {id} is the original task id, {brokers} the Kafka brokers, {self} this
	// program. Empty means tasks fail with "no crawler configured".
	CrawlerCommand string `env:"CRAWL_CRAWLER_COMMAND"`
	// CrawlerTimeout bounds one crawler run.
	CrawlerTimeout time.Duration `env:"CRAWL_CRAWLER_TIMEOUT" envDefault:"2h"`
	// CompletionDeadline is how long after the crawler exits the workflow waits for
	// processed_tweets to reach total_tweets before failing with the missing count.
	CompletionDeadline time.Duration `env:"CRAWL_COMPLETION_DEADLINE" envDefault:"1h"`
	// ProgressTTL is how long a completed task_progress hash is kept.
	ProgressTTL time.Duration `env:"CRAWL_PROGRESS_TTL" envDefault:"168h"`
	// ProgressIdleTTL expires hashes of tasks that never complete, counted from their last record.
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
