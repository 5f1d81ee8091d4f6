package worker

import (
	"context"
	"fmt"
	"os"

	sdkworker "go.temporal.io/sdk/worker"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/crawl/crawlkafka"
	"github.com/taskloom/taskloom/internal/platform"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// registerCrawl registers CrawlTaskWorkflow and its activities.
func registerCrawl(w sdkworker.Registry, p *platform.Platform) error {
	acts, err := newCrawlActivities(p)
	if err != nil {
		return err
	}
	crawlwf.Register(w, acts)
	return nil
}

func newCrawlActivities(p *platform.Platform) (*crawlact.Activities, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("crawl: locate own executable for {self}: %w", err)
	}
	return &crawlact.Activities{
		Tasks:          crawldb.New(p.Mongo),
		Progress:       countscript.FromPlatform(p),
		CrawlerCommand: p.Config.Crawl.CrawlerCommand,
		Brokers:        p.Config.Kafka.Brokers,
		Self:           self,
	}, nil
}

// NewCrawlConsumer is the Kafka consumer of the crawler's two topics as the worker runs it: the
// records it counts reach the tasks' workflows through the crawl workflows' client
// (crawlwf.Notifier: TASK_INIT starts a task's workflow, the completing record signals it).
func NewCrawlConsumer(p *platform.Platform) (*crawlkafka.Consumer, error) {
	return crawlkafka.NewPlatformConsumer(p, &crawlwf.Notifier{Client: p.Temporal,
		TaskQueue: p.Config.Temporal.TaskQueue, CompletionDeadline: p.Config.Crawl.CompletionDeadline})
}

// runCrawlConsumers consumes the crawler's control and data topics until
// ctx ends; the completing record signals its task's workflow.
func runCrawlConsumers(ctx context.Context, p *platform.Platform) error {
	if !p.Config.Crawl.Consumers {
		p.Log.Info("crawl consumers disabled (CRAWL_CONSUMERS=false)")
		return nil
	}
	if len(p.Config.Kafka.Brokers) == 0 {
		// A deployment without Kafka still runs every other subsystem.
		p.Log.Warn("crawl consumers not started: KAFKA_BROKERS is empty")
		return nil
	}
	c, err := NewCrawlConsumer(p)
	if err != nil {
		return err
	}
	p.Log.Info("crawl consumers started", "group", p.Config.Crawl.ConsumerGroup,
		"topics", []string{p.Config.Crawl.ControlTopic, p.Config.Crawl.DataTopic})
	return c.Run(ctx)
}
