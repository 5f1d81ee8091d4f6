package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/fakes/receiver"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
)

// The demo Bitable base of testdata/feishu/taskloom_base.json, as make dev addresses it.
const (
	benchAppToken   = "bascnTaskloomDemo"
	benchTaskTable  = "https://bench.feishu.cn/base/" + benchAppToken + "?table=tblTasks"
	benchResultWiki = "https://bench.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
	benchDramaTable = "https://bench.feishu.cn/base/" + benchAppToken + "?table=tblDrama"
	benchCapture    = "https://bench.feishu.cn/base/" + benchAppToken + "?table=tblCapture"
)

// stack is every server the run uses: the Temporal dev server, FerretDB in its own process,
// Redis (the machine's or miniredis), kfake, the Feishu emulator, the summary receiver and the
// pipeline vendors. Scenarios and baselines share them.
type stack struct {
	cfg *config.Config
	// target is "dev" (the bench's own stack) or "cluster" (BENCH_TARGET=cluster, target.go).
	target   string
	temporal *testsuite.DevServer
	// temporalMetrics are the Temporal processes' Prometheus endpoints (their database requests,
	// serverdb.go): the dev server's one, or each of a cluster's.
	temporalMetrics []string
	// vendorsURL and assistantURL are the fake pipeline vendors and the fake Telegram server's
	// base URLs (in this process for dev, the cluster's fakes process otherwise).
	vendorsURL, assistantURL string
	// temporalPID and mongoPID are the dev server's and FerretDB's processes (cpu.go).
	temporalPID, mongoPID int
	feishu                *feishuemu.Server
	receiver              *receiver.Server
	vendors               *vendors.Server
	// assistant is the fake Telegram server's assistant endpoint, the provider of the apply
	// scenario's pipeline (as in make dev).
	assistant *telegram.Server
	// redis is the shared Redis the run uses, kept for removing the run's keys at the end; nil
	// when the run uses miniredis.
	redis *redis.Client
	// feishuLatency is added to every emulator call (BENCH_FEISHU_LATENCY).
	feishuLatency time.Duration
	stops         []func()
}

func startStack(ctx context.Context, root string) (*stack, error) {
	s := &stack{cfg: config.Defaults(), target: "dev"}
	steps := []func(context.Context, string) error{s.startTemporal, s.startMongo, s.startRedis, s.startKafka, s.startFakes}
	for _, step := range steps {
		if err := step(ctx, root); err != nil {
			s.close()
			return nil, err
		}
	}
	c := s.cfg
	c.LogLevel = "warn"
	c.Temporal.TaskQueue = "bench-" + suffix()
	c.Mongo.Database = "bench_" + suffix()
	c.Redis.KeyPrefix = "bench:" + suffix() + ":"
	// The pull scenario's 8 clients pull far more than an interactive client would.
	c.Echo.PullRateLimitPerMinute, c.Echo.PullRateLimitPerHour, c.Echo.PullQuota = 1_000_000, 10_000_000, 100_000_000
	c.Pipeline.CallbackSecret = "bench-callback-secret"
	if err := c.Validate(); err != nil {
		s.close()
		return nil, fmt.Errorf("bench config: %w", err)
	}
	if s.redis != nil {
		s.stops = append(s.stops, func() { removeKeys(s.redis, c.Redis.KeyPrefix) })
	}
	return s, nil
}

// removeKeys deletes what a run left in a shared Redis under its prefix: a
// crawl run alone leaves a progress hash of every tweet id it counted (200,000
// at BENCH_SCALE=10), which would otherwise live out its 7-day TTL.
func removeKeys(c *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := devstack.RemoveKeys(ctx, c, prefix); err != nil {
		logf("the run's Redis keys: %v", err)
	}
}

// redisName says which Redis the run used.
func (s *stack) redisName() string {
	if s.target == targetCluster {
		return "the cluster's"
	}
	if s.redis != nil {
		return "redis"
	}
	return "miniredis"
}

func (s *stack) close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

func (s *stack) startTemporal(ctx context.Context, root string) error {
	bin := filepath.Join(root, ".bin", "temporal")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run `make tools`", bin)
	}
	metricsAddr, err := loopback.FreeAddr()
	if err != nil {
		return err
	}
	_, metricsPort, err := net.SplitHostPort(metricsAddr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(sctx, testsuite.DevServerOptions{
		ExistingPath:  bin,
		ClientOptions: &client.Options{Namespace: "default", Logger: quietLogger()},
		LogLevel:      "error",
		ExtraArgs:     append(devstack.TemporalDevArgs(), "--metrics-port", metricsPort),
		Stdout:        io.Discard,
		Stderr:        os.Stderr,
	})
	if err != nil {
		return fmt.Errorf("start temporal dev server: %w", err)
	}
	s.temporal = srv
	s.temporalMetrics = []string{"http://" + metricsAddr + "/metrics"}
	s.temporalPID = childPID("temporal")
	s.stops = append(s.stops, func() { _ = srv.Stop() })
	s.cfg.Temporal.Address = srv.FrontendHostPort()
	return nil
}

// startMongo uses MONGO_URI when set (a real MongoDB), else runs ./.bin/embedded-mongo (FerretDB,
// SQLite handler) in its own process, as the tests do, so its CPU shows up separately from the
// bench's clients.
func (s *stack) startMongo(ctx context.Context, root string) error {
	if uri := os.Getenv("MONGO_URI"); uri != "" {
		// A real MongoDB: the figures users get, and the scale series' documents examined.
		s.cfg.Mongo.URI = uri
		return nil
	}
	addr, err := loopback.FreeAddr()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "taskloom-bench-mongo-")
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(root, ".bin", "embedded-mongo"), "-addr", addr, "-dir", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start embedded-mongo (make tools builds it): %w", err)
	}
	s.stops = append(s.stops, func() { stopProcess(cmd); _ = os.RemoveAll(dir) })
	s.mongoPID = cmd.Process.Pid
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("embedded mongo did not start: %w", err)
	}
	s.cfg.Mongo.URI = strings.TrimSpace(line)
	return nil
}

// startRedis uses REDIS_URL or a Redis on 127.0.0.1:6379 when one answers (numbers then include
// real network round trips), else miniredis.
func (s *stack) startRedis(ctx context.Context, _ string) error {
	for _, u := range []string{os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0"} {
		if u == "" {
			continue
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			return fmt.Errorf("REDIS_URL: %w", err)
		}
		c := redis.NewClient(opt)
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = c.Ping(pctx).Err()
		cancel()
		if err == nil {
			s.cfg.Redis.URL, s.redis = u, c
			s.stops = append(s.stops, func() { _ = c.Close() })
			return nil
		}
		_ = c.Close()
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		return fmt.Errorf("miniredis: %w", err)
	}
	s.stops = append(s.stops, mr.Close)
	s.cfg.Redis.URL = "redis://" + mr.Addr()
	return nil
}

func (s *stack) startKafka(context.Context, string) error {
	kc, err := devstack.StartKafka(0)
	if err != nil {
		return err
	}
	s.stops = append(s.stops, kc.Close)
	s.cfg.Kafka.Brokers = kc.ListenAddrs()
	return nil
}

// startFakes runs the Feishu emulator (with the demo base, tasks emptied), the summary webhook
// receiver and the pipeline vendors.
func (s *stack) startFakes(_ context.Context, root string) error {
	fx, err := feishuemu.LoadFixtureFile(filepath.Join(root, "testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		return err
	}
	for i := range fx.Apps[0].Tables {
		fx.Apps[0].Tables[i].Records = nil // the webhook scenario writes exactly the rows it measures
	}
	emu, err := feishuemu.New(feishuemu.Options{}, fx)
	if err != nil {
		return err
	}
	s.feishu = emu
	// The emulator answers in microseconds; Feishu's Open API does not. Each call is delayed by
	// BENCH_FEISHU_LATENCY (50ms unless set) so that the number of calls costs what it costs.
	s.feishuLatency = 50 * time.Millisecond
	if v := os.Getenv("BENCH_FEISHU_LATENCY"); v != "" {
		if s.feishuLatency, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("BENCH_FEISHU_LATENCY: %w", err)
		}
	}
	srv := httptest.NewServer(delayed(emu.Handler(), s.feishuLatency))
	s.stops = append(s.stops, srv.Close)
	w := &s.cfg.Webhook
	w.FeishuAppID, w.FeishuAppSecret, w.FeishuBaseURL = "cli_bench", "bench", srv.URL
	w.TaskBitableURL, w.WebhookBitableURL, w.DramaBitableURL, w.CaptureBitableURL = benchTaskTable, benchResultWiki, benchDramaTable, benchCapture

	if s.receiver, err = receiver.Start("127.0.0.1:0"); err != nil {
		return err
	}
	s.stops = append(s.stops, func() { _ = s.receiver.Close() })
	w.SummaryWebhookURL = s.receiver.URL() + "/summary"
	// Readiness is immediate in the scenario (every task is finished), so short backoffs only
	// matter if a row is not ready; the retry backoff keeps a failed push from hiding.
	w.ReadinessBackoff, w.ReadinessBackoffMax, w.RetryBackoff = 200*time.Millisecond, time.Second, time.Second

	if s.vendors, err = vendors.Start("127.0.0.1:0", vendors.Options{Secret: []byte("bench-callback-secret")}); err != nil {
		return err
	}
	s.stops = append(s.stops, func() { _ = s.vendors.Close() })
	s.cfg.Pipeline.FakeVendorsURL = s.vendors.URL
	s.vendorsURL = s.vendors.URL

	if s.assistant, err = telegram.Start("127.0.0.1:0", "bench:taskloom-fake-bot"); err != nil {
		return err
	}
	s.stops = append(s.stops, func() { _ = s.assistant.Close() })
	s.assistantURL = s.assistant.URL
	return nil
}

// env is the process environment that gives `starter worker` and `starter api` the same
// configuration as s.cfg.
func (s *stack) env(apiAddr, metricsAddr string) []string {
	c := s.cfg
	w := c.Webhook
	vars := map[string]string{
		"TASKLOOM_ENV": c.Env, "LOG_LEVEL": "error",
		"TEMPORAL_ADDRESS": c.Temporal.Address, "TEMPORAL_NAMESPACE": c.Temporal.Namespace, "TEMPORAL_TASK_QUEUE": c.Temporal.TaskQueue,
		"MONGO_URI": c.Mongo.URI, "MONGO_DATABASE": c.Mongo.Database,
		"REDIS_URL": c.Redis.URL, "REDIS_KEY_PREFIX": c.Redis.KeyPrefix,
		"KAFKA_BROKERS": strings.Join(c.Kafka.Brokers, ","),
		"API_ADDR":      apiAddr, "WORKER_METRICS_ADDR": metricsAddr,
		"FEISHU_APP_ID": w.FeishuAppID, "FEISHU_APP_SECRET": w.FeishuAppSecret, "FEISHU_BASE_URL": w.FeishuBaseURL,
		"TASK_BITABLE_URL": w.TaskBitableURL, "WEBHOOK_BITABLE_URL": w.WebhookBitableURL,
		"DRAMA_BITABLE_URL": w.DramaBitableURL, "CAPTURE_BITABLE_URL": w.CaptureBitableURL,
		"SUMMARY_WEBHOOK_URL":       w.SummaryWebhookURL,
		"WEBHOOK_READINESS_BACKOFF": w.ReadinessBackoff.String(), "WEBHOOK_READINESS_BACKOFF_MAX": w.ReadinessBackoffMax.String(),
		"WEBHOOK_RETRY_BACKOFF":           w.RetryBackoff.String(),
		"ECHO_PULL_RATE_LIMIT_PER_MINUTE": fmt.Sprint(c.Echo.PullRateLimitPerMinute),
		"ECHO_PULL_RATE_LIMIT_PER_HOUR":   fmt.Sprint(c.Echo.PullRateLimitPerHour),
		"ECHO_PULL_QUOTA":                 fmt.Sprint(c.Echo.PullQuota),
		"INTERNAL_CALLBACK_SECRET":        c.Pipeline.CallbackSecret,
		"PIPELINE_FAKE_VENDORS_URL":       c.Pipeline.FakeVendorsURL,
		// The worker's slots shape the noisy-neighbour row (docs/pipelines.md "Fair under load"); a run may set them.
		"WORKER_MAX_CONCURRENT_WORKFLOW_TASKS": fmt.Sprint(c.Worker.MaxConcurrentWorkflowTasks),
		"WORKER_MAX_CONCURRENT_ACTIVITIES":     fmt.Sprint(c.Worker.MaxConcurrentActivities),
	}
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// delayed answers every request after d, like a remote API.
func delayed(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		h.ServeHTTP(w, r)
	})
}

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
