// Package devstack runs the embedded stand-ins for taskloom's dependencies — FerretDB for
// MongoDB, miniredis for Redis, kfake for Kafka, and the in-repo fakes of external services —
// for `make dev` and the tests. It starts only what the configuration leaves unset, so setting
// MONGO_URI, REDIS_URL or KAFKA_BROKERS switches that dependency to the real thing.
package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/embeddedmongo"
)

// Fixed loopback ports of the embedded servers under `make dev`.
const (
	MongoAddr = "127.0.0.1:27017"
	// RedisAddr avoids 6379, where a real Redis often runs.
	RedisAddr = "127.0.0.1:6380"
	KafkaPort = 9092
)

// Topics are created in the embedded Kafka at start; subsystems list theirs here.
var Topics = []string{
	// crawl: the crawler's two topics, the dead-letter topic, the reply scheduler topic.
	"task_control_topic", "x_com_scraped_data", "crawl_dead_letter", "task_scheduler_replies",
}

// KafkaPartitions is the partition count of each embedded topic.
const KafkaPartitions = 4

// MongoDir is FerretDB's directory under Options.DataDir.
const MongoDir = "mongo"

// Options places the stack.
type Options struct {
	DataDir string // FerretDB's SQLite files go under DataDir/MongoDir
	Log     *slog.Logger
	// Addresses override the fixed ports (tests use 127.0.0.1:0 and port 0).
	MongoAddr, RedisAddr string
	KafkaPort            int
}

func (o *Options) defaults() {
	if o.MongoAddr == "" {
		o.MongoAddr = MongoAddr
	}
	if o.RedisAddr == "" {
		o.RedisAddr = RedisAddr
	}
	if o.KafkaPort == 0 {
		o.KafkaPort = KafkaPort
	}
}

// Stack is a running dev stack.
type Stack struct {
	// Started names the embedded servers that were started, with their URLs.
	Started map[string]string
	stops   []func()
}

// Start brings up every embedded dependency cfg leaves unset and writes its URL into cfg.
func Start(ctx context.Context, cfg *config.Config, o Options) (*Stack, error) {
	o.defaults()
	s := &Stack{Started: map[string]string{}}
	if cfg.Mongo.URI == "" {
		mctx, cancel := context.WithCancel(ctx)
		uri, done, err := embeddedmongo.Start(mctx, o.MongoAddr, filepath.Join(o.DataDir, MongoDir), o.Log)
		if err != nil {
			cancel()
			return nil, err
		}
		s.stops = append(s.stops, func() { cancel(); <-done })
		cfg.Mongo.URI, s.Started["mongo (FerretDB)"] = uri, uri
	}
	if cfg.Redis.URL == "" {
		mr := miniredis.NewMiniRedis()
		if err := mr.StartAddr(o.RedisAddr); err != nil {
			s.Close()
			return nil, fmt.Errorf("miniredis on %s: %w", o.RedisAddr, err)
		}
		s.stops = append(s.stops, mr.Close)
		cfg.Redis.URL = "redis://" + mr.Addr()
		s.Started["redis (miniredis)"] = cfg.Redis.URL
	}
	if len(cfg.Kafka.Brokers) == 0 {
		kc, err := StartKafka(o.KafkaPort)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.stops = append(s.stops, kc.Close)
		cfg.Kafka.Brokers = kc.ListenAddrs()
		s.Started["kafka (kfake)"] = kc.ListenAddrs()[0]
	}
	return s, nil
}

// StartKafka runs an in-process kfake broker on port (-1 or 0 = any free port) with Topics
// created.
func StartKafka(port int) (*kfake.Cluster, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(KafkaPartitions)}
	if port > 0 {
		opts = append(opts, kfake.Ports(port))
	}
	if len(Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(KafkaPartitions, Topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("kfake on port %d: %w", port, err)
	}
	return c, nil
}

// Close stops everything Start started, newest first.
func (s *Stack) Close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}
