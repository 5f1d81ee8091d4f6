// Package platform owns the process-wide clients (Temporal, Mongo, Redis, Kafka, metrics) that
// the API and the worker share, and the readiness checks over them.
package platform

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/mongox"
)

// Platform is what every subsystem receives. Nothing in it keeps state that another replica
// would need: all of it is a connection to a shared engine.
type Platform struct {
	Config   *config.Config
	Log      *slog.Logger
	Mongo    *mongo.Database
	Redis    redis.UniversalClient
	Temporal client.Client
	// Kafka is a producer/admin client; nil when KAFKA_BROKERS is empty.
	Kafka   *kgo.Client
	Metrics *prometheus.Registry

	// SchemaOnce makes internal/schema.AtStart run once per platform: the API and the worker
	// share one Platform when they run in one process (the dev stack), and FerretDB v1 drops the
	// connection when the same indexes are created twice at the same moment.
	SchemaOnce sync.Once

	mongoClient *mongo.Client
	mu          sync.Mutex
	checks      map[string]Check
}

// Check reports whether a dependency answers.
type Check func(ctx context.Context) error

// Open connects to every configured dependency. Connections are lazy where the driver allows,
// so a dependency that is down at start surfaces in /readyz instead of failing the process.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Platform, error) {
	p := &Platform{Config: cfg, Log: log, Metrics: prometheus.NewRegistry(), checks: map[string]Check{}}
	p.Metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := p.openMongo(cfg.Mongo); err != nil {
		return nil, err
	}
	if err := p.openRedis(cfg.Redis); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.openKafka(cfg.Kafka); err != nil {
		p.Close()
		return nil, err
	}
	tc, err := DialTemporal(ctx, cfg.Temporal, log, p.Metrics)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.Temporal = tc
	p.AddCheck("temporal", func(ctx context.Context) error {
		_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	return p, nil
}

func (p *Platform) openMongo(c config.Mongo) error {
	if c.URI == "" {
		return fmt.Errorf("MONGO_URI is empty (run through `make dev` for the embedded database)")
	}
	mc, err := mongo.Connect(options.Client().ApplyURI(c.URI).SetMonitor(mongox.Monitor(mongox.NewCommandCounter(p.Metrics))).
		SetServerSelectionTimeout(3 * time.Second).SetTimeout(15 * time.Second))
	if err != nil {
		return fmt.Errorf("connect mongo: %w", err)
	}
	p.mongoClient, p.Mongo = mc, mc.Database(c.Database)
	p.AddCheck("mongo", func(ctx context.Context) error { return mc.Ping(ctx, nil) })
	return nil
}

func (p *Platform) openRedis(c config.Redis) error {
	if c.URL == "" {
		return fmt.Errorf("REDIS_URL is empty (run through `make dev` for the embedded Redis)")
	}
	opt, err := redis.ParseURL(c.URL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	rc := redis.NewClient(opt)
	rc.AddHook(newRedisCounter(p.Metrics))
	p.Redis = rc
	p.AddCheck("redis", func(ctx context.Context) error { return rc.Ping(ctx).Err() })
	return nil
}

// kafkaLinger is how long the producer holds a partition's records for more to join them. Every
// produce of taskloom's (crawl reply tasks, dead letters) waits for its acknowledgements before
// the batch is counted, so lingering only adds to that wait — franz-go's default, 10 ms, once per
// partition batch. Without it records still share requests: those produced while one is in
// flight go out together in the next (bench crawl row, five runs each, interleaved: 142 ms
// against 154 ms from the first record sent to the completion signal).
const kafkaLinger = 0

func (p *Platform) openKafka(c config.Kafka) error {
	if len(c.Brokers) == 0 {
		return nil
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(kafkaLinger))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	p.Kafka = kc
	p.AddCheck("kafka", func(ctx context.Context) error { return kc.Ping(ctx) })
	return nil
}

// RedisKey prefixes a key with REDIS_KEY_PREFIX.
func (p *Platform) RedisKey(k string) string { return p.Config.Redis.KeyPrefix + k }

// AddCheck registers a readiness check; subsystems add theirs (e.g. feishu).
func (p *Platform) AddCheck(name string, c Check) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.checks == nil {
		p.checks = map[string]Check{}
	}
	p.checks[name] = c
}

// CheckResult is one dependency's state in /readyz.
type CheckResult struct {
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// Ready runs every check concurrently, each bounded by timeout.
func (p *Platform) Ready(ctx context.Context, timeout time.Duration) (results []CheckResult, ok bool) {
	p.mu.Lock()
	names := make([]string, 0, len(p.checks))
	for n := range p.checks {
		names = append(names, n)
	}
	checks := p.checks
	p.mu.Unlock()
	sort.Strings(names)
	results = make([]CheckResult, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := checks[n](cctx)
			r := CheckResult{Name: n, Status: "ok", LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				r.Status, r.Error = "down", err.Error()
			}
			results[i] = r
		}()
	}
	wg.Wait()
	ok = true
	for _, r := range results {
		ok = ok && r.Status == "ok"
	}
	return results, ok
}

// Close releases every connection.
func (p *Platform) Close() {
	if p.Temporal != nil {
		p.Temporal.Close()
	}
	if p.Kafka != nil {
		p.Kafka.Close()
	}
	if p.Redis != nil {
		_ = p.Redis.Close()
	}
	if p.mongoClient != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = p.mongoClient.Disconnect(ctx)
	}
}
