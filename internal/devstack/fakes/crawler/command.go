package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
)

// Options are the fake crawler command's settings: what to send and where.
// The real crawler takes --original-task-id the same way.
type Options struct {
	Crawl   Crawl
	Brokers []string
	Topics  crawl.Topics
	Timeout time.Duration
}

// Flags registers the command line flags on fs.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&o.Crawl.OriginalTaskID, "original-task-id", 0, "original task id (required)")
	fs.IntVar(&o.Crawl.Tweets, "tweets", 450, "distinct tweets to send")
	fs.Float64Var(&o.Crawl.DupRate, "dup-rate", 0, "share of tweets sent a second time with the same id, as a producer retry would (copies are not counted)")
	fs.BoolVar(&o.Crawl.InitLast, "init-last", false, "send TASK_INIT after the data")
	fs.IntVar(&o.Crawl.RepliesPerTweet, "replies", 2, "replies per tweet")
	fs.IntVar(&o.Crawl.Drop, "drop", 0, "announced tweets never sent (the task then fails at its deadline)")
	fs.Uint64Var(&o.Crawl.Seed, "seed", 1, "seed of the duplicate choice")
	fs.StringSliceVar(&o.Brokers, "brokers", nil, "Kafka brokers (default: KAFKA_BROKERS)")
	fs.StringVar(&o.Topics.Control, "control-topic", crawl.ControlTopicDefault, "TaskControlMessage topic")
	fs.StringVar(&o.Topics.Data, "data-topic", crawl.DataTopicDefault, "RawScrapedDataMessage topic")
	fs.DurationVar(&o.Timeout, "timeout", time.Minute, "give up producing after this long")
}

// Run produces the fake crawl and prints what it did to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if len(o.Brokers) == 0 && os.Getenv("KAFKA_BROKERS") != "" {
		o.Brokers = strings.Split(os.Getenv("KAFKA_BROKERS"), ",")
	}
	if len(o.Brokers) == 0 {
		return errors.New("fake crawler: no brokers (--brokers or KAFKA_BROKERS)")
	}
	if err := o.Crawl.Validate(); err != nil {
		return fmt.Errorf("fake crawler: %w", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.Brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		return fmt.Errorf("fake crawler: kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	_, _ = fmt.Fprintf(out, "fake crawler: task %d, %d tweets, dup rate %v, init last %v, drop %d\n",
		o.Crawl.OriginalTaskID, o.Crawl.Tweets, o.Crawl.DupRate, o.Crawl.InitLast, o.Crawl.Drop)
	sent, err := o.Crawl.Produce(ctx, cl, o.Topics)
	if err != nil {
		return err
	}
	init, _ := o.Crawl.Messages()
	_, _ = fmt.Fprintf(out, "fake crawler: sent TASK_INIT total_tweets=%d and %d tweet records\n", init.TotalTweets, sent)
	return nil
}
