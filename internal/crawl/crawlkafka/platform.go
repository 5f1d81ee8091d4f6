package crawlkafka

import (
	"errors"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawlprom"
	"github.com/taskloom/taskloom/internal/platform"
)

// NewPlatformConsumer assembles the consumer from the process's clients and
// the CRAWL_* config: replies and dead letters go out through the shared
// Kafka producer, counts into Redis under REDIS_KEY_PREFIX, and n tells the
// tasks' workflows.
func NewPlatformConsumer(p *platform.Platform, n crawl.WorkflowNotifier) (*Consumer, error) {
	cfg := p.Config.Crawl
	if p.Kafka == nil || len(p.Config.Kafka.Brokers) == 0 {
		return nil, errors.New("crawl consumers need KAFKA_BROKERS")
	}
	proc := &Processor{
		Topics:      crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic},
		Store:       countscript.FromPlatform(p),
		Scheduler:   NewReplyProducer(p.Kafka, cfg.SchedulerTopic),
		DeadLetters: NewDeadLetterProducer(p.Kafka, cfg.DeadLetterTopic),
		Workflows:   n,
		Log:         p.Log.With("subsystem", "crawl"),
		Metrics:     crawlprom.New(p.Metrics),
	}
	return NewConsumer(ConsumerConfig{Brokers: p.Config.Kafka.Brokers, Group: cfg.ConsumerGroup,
		Topics: proc.Topics, BatchSize: cfg.BatchSize}, proc)
}
