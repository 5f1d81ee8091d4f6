package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/starter/cli"
	"github.com/taskloom/taskloom/worker"
)

// devFake starts one in-repo fake of an external service for `make dev`, points cfg at it and
// returns its name and URL; each subsystem lists its fakes in devFakes.
type devFake func(ctx context.Context, cfg *config.Config, addrs devAddrs, log *slog.Logger) (name, url string, err error)

var devFakes = []devFake{devFeishu, devSummaryReceiver, devCrawler, devPipelineFakes, devTelegram}

// devSeeder loads demo data once the platform is up and returns lines to print (e.g. a curl).
type devSeeder func(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error)

// devSeeders lists every subsystem's seeder; echo's seeds through the process's echo service.
func devSeeders(echoSvc *taskecho.Server) []devSeeder {
	return []devSeeder{devPipelineSeed, devEntrySeed, devEchoSeed(echoSvc)}
}

// runDev runs the dev stack until ctx ends, then stops the API and the worker, the embedded
// servers and last the Temporal dev server, and returns nil once every one of them is gone.
// State lives in DEV_DATA_DIR and survives a restart; reset deletes it first.
func runDev(ctx context.Context, reset bool) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if !cfg.Dev() {
		return errors.New("TASKLOOM_ENV must be dev for the dev stack")
	}
	dev := cfg.DevStack
	if reset {
		if err := resetDevData(dev.DataDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dev.DataDir, 0o755); err != nil {
		return fmt.Errorf("DEV_DATA_DIR %s: %w", dev.DataDir, err)
	}
	if err := listenersFree(cfg); err != nil {
		return err
	}
	log := logging.New(cfg.LogLevel)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var temporal *temporalDev
	if os.Getenv("TEMPORAL_ADDRESS") == "" {
		cfg.Temporal.Address = fmt.Sprintf("127.0.0.1:%d", dev.TemporalPort)
		if os.Getenv("TEMPORAL_UI_URL") == "" {
			cfg.Temporal.UIURL = fmt.Sprintf("http://127.0.0.1:%d", dev.TemporalUIPort)
		}
		if temporal, err = startTemporalDev(cfg); err != nil {
			return err
		}
		defer temporal.stop() // deferred first, so it runs last: after the worker and the stand-ins
	}
	// The dev worker runs as its build of the deployment and is made current once it polls, as a
	// rollout does (docs: Worker Versioning); TEMPORAL_WORKER_VERSIONING=false turns that off.
	if os.Getenv("TEMPORAL_WORKER_VERSIONING") == "" {
		cfg.Temporal.WorkerVersioning = true
	}
	opts, addrs, moved, err := standInAddrs(dev.DataDir, logging.New(dev.LogLevel).With("component", "ferretdb"))
	if err != nil {
		return err
	}
	stack, err := devstack.Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer stack.Close()
	fakes := map[string]string{}
	for _, f := range devFakes {
		name, url, err := f(ctx, cfg, addrs, log)
		if err != nil {
			return fmt.Errorf("dev fake: %w", err)
		}
		fakes[name] = url
	}
	if err := writeDevEnv(cfg); err != nil {
		return err
	}
	p, err := platform.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer p.Close()
	// The dev admin key first, so that setup, which the dev stack runs as any deployment does
	// (namespace, search attributes on a TEMPORAL_ADDRESS of the user's, indexes, schedules),
	// finds an admin key and mints none.
	adminKey, err := ensureDevAdminKey(ctx, p)
	if err != nil {
		return err
	}
	if _, err := cli.Setup(ctx, p); err != nil {
		return err
	}
	// One echo service for the seeder, the worker and the API: they run in this one process.
	echoSvc, err := taskechowire.FromPlatform(p)
	if err != nil {
		return err
	}
	var lines []string
	for _, s := range devSeeders(echoSvc) {
		l, err := s(ctx, p, adminKey)
		if err != nil {
			return fmt.Errorf("seed demo data: %w", err)
		}
		lines = append(lines, l...)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return worker.Run(gctx, p, echoSvc) })
	g.Go(func() error { return api.Run(gctx, p, echoSvc) })
	if cfg.Temporal.WorkerVersioning {
		g.Go(func() error { return makeCurrent(gctx, p) })
	}
	if temporal != nil {
		g.Go(func() error {
			select {
			case <-temporal.exited:
				return fmt.Errorf("temporal dev server exited: %v", temporal.err)
			case <-gctx.Done():
				return nil
			}
		})
	}
	printDevBanner(cfg, stack, fakes, moved, adminKey, lines)
	err = g.Wait()
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "taskloom dev: stopping")
		return nil
	}
	return err
}

// Fixed loopback ports of the embedded servers and the fakes; each moves to a free port when
// something else holds it (the banner says so).
const (
	kafkaAddr           = "127.0.0.1:9092"
	feishuEmulatorAddr  = "127.0.0.1:18090"
	summaryReceiverAddr = "127.0.0.1:18091"
	vendorsAddr         = "127.0.0.1:18092"
	telegramAddr        = "127.0.0.1:18093"
)

// devAddrs maps each fake's fixed address to the one it listens on this run (the same, or a
// free port when the fixed one is taken).
type devAddrs map[string]string

// standInAddrs picks the embedded servers' and the fakes' addresses: their fixed ports, or free
// ones where those are taken. moved lists the ones that moved.
func standInAddrs(dataDir string, log *slog.Logger) (devstack.Options, devAddrs, []string, error) {
	o := devstack.Options{DataDir: dataDir, Log: log}
	addrs := devAddrs{}
	var moved []string
	pick := func(preferred string) (string, error) {
		addr, m, err := loopback.PreferredOrFree(preferred)
		if m {
			moved = append(moved, fmt.Sprintf("%s was taken, using %s", preferred, addr))
		}
		return addr, err
	}
	var err error
	if o.MongoAddr, err = pick(devstack.MongoAddr); err != nil {
		return o, nil, nil, err
	}
	if o.RedisAddr, err = pick(devstack.RedisAddr); err != nil {
		return o, nil, nil, err
	}
	kafka, err := pick(kafkaAddr)
	if err != nil {
		return o, nil, nil, err
	}
	_, port, _ := net.SplitHostPort(kafka)
	if o.KafkaPort, err = strconv.Atoi(port); err != nil {
		return o, nil, nil, err
	}
	for _, a := range []string{feishuEmulatorAddr, summaryReceiverAddr, vendorsAddr, telegramAddr} {
		if addrs[a], err = pick(a); err != nil {
			return o, nil, nil, err
		}
	}
	return o, addrs, moved, nil
}

// resetDevData deletes the state a restart keeps — the Temporal dev server's database and
// FerretDB's files — so the stack starts clean. The admin key stays.
func resetDevData(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, temporalDB+"*"))
	if err != nil {
		return err
	}
	for _, p := range append(paths, filepath.Join(dir, devstack.MongoDir)) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("reset %s: %w", p, err)
		}
	}
	return nil
}

// listenersFree fails at once, naming the variable, when the API's or the worker's metrics
// address is taken (a `starter api` or `starter worker` already running, another make dev),
// before anything else has started.
func listenersFree(cfg *config.Config) error {
	for name, addr := range map[string]string{"API_ADDR": cfg.API.Addr, "WORKER_METRICS_ADDR": cfg.Worker.MetricsAddr} {
		if addr == "" {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s %s is in use (another make dev, or starter api/worker?): set %s to a free address: %w", name, addr, name, err)
		}
		_ = l.Close()
	}
	return nil
}

// ensureDevAdminKey makes TASKLOOM_ADMIN_KEY, or a key generated once and kept in
// DEV_DATA_DIR, an active admin key.
func ensureDevAdminKey(ctx context.Context, p *platform.Platform) (string, error) {
	store := auth.NewStore(p.Mongo)
	key := p.Config.API.AdminKey
	path := filepath.Join(p.Config.DevStack.DataDir, "admin-key")
	if key == "" {
		if b, err := os.ReadFile(path); err == nil {
			key = strings.TrimSpace(string(b))
		}
	}
	if key == "" {
		var err error
		if key, err = auth.Generate(); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("keep dev admin key: %w", err)
		}
	}
	return key, store.Ensure(ctx, key, "dev-admin", auth.PermAdmin)
}

// devEnvFile, in DEV_DATA_DIR, keeps the addresses `make dev` chose, for starter commands run
// from another shell.
const devEnvFile = "dev.env"

// writeDevEnv writes the connection settings the dev stack filled in as KEY='value' lines, so that
// `set -a; . ./.data/dev.env; set +a` lets `starter apikey`, `schedules`, `crawl start`,
// `webhook-*` … reach the same servers.
func writeDevEnv(cfg *config.Config) error {
	w, e := cfg.Webhook, cfg.Entry
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("write %s: locate own executable: %w", devEnvFile, err)
	}
	vars := []struct{ k, v string }{
		{"TEMPORAL_ADDRESS", cfg.Temporal.Address}, {"TEMPORAL_NAMESPACE", cfg.Temporal.Namespace},
		{"MONGO_URI", cfg.Mongo.URI}, {"MONGO_DATABASE", cfg.Mongo.Database}, {"REDIS_URL", cfg.Redis.URL},
		{"KAFKA_BROKERS", strings.Join(cfg.Kafka.Brokers, ",")},
		{"FEISHU_APP_ID", w.FeishuAppID}, {"FEISHU_APP_SECRET", w.FeishuAppSecret}, {"FEISHU_BASE_URL", w.FeishuBaseURL},
		{"TASK_BITABLE_URL", w.TaskBitableURL}, {"WEBHOOK_BITABLE_URL", w.WebhookBitableURL},
		{"DRAMA_BITABLE_URL", w.DramaBitableURL}, {"CAPTURE_BITABLE_URL", w.CaptureBitableURL},
		{"SUMMARY_WEBHOOK_URL", w.SummaryWebhookURL},
		// What a `starter worker` beside the dev stack needs to run the demo tasks the same way: the
		// fake crawler is a command of this binary, not of starter.
		{"CRAWL_CRAWLER_COMMAND", strings.ReplaceAll(cfg.Crawl.CrawlerCommand, "{self}", self)},
		{"TELEGRAM_BOT_TOKEN", e.TelegramBotToken}, {"TELEGRAM_API_BASE_URL", e.TelegramAPIBaseURL},
		{"TELEGRAM_WEBHOOK_SECRET", e.TelegramWebhookSecret}, {"TELEGRAM_WORKFLOW_ID", e.TelegramWorkflowID},
		{devWatermarkVar, cfg.Pipeline.WatermarkURL},
		// Where `starter seed-demo` registers the fakes.
		{"PIPELINE_FAKE_VENDORS_URL", cfg.Pipeline.FakeVendorsURL},
	}
	var b strings.Builder
	b.WriteString("# written by `make dev`: set -a; . ./.data/dev.env; set +a\n")
	for _, kv := range vars {
		fmt.Fprintf(&b, "%s='%s'\n", kv.k, strings.ReplaceAll(kv.v, "'", `'\''`))
	}
	path := filepath.Join(cfg.DevStack.DataDir, devEnvFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// printDevBanner prints where everything is, what survives a restart, and the demo commands.
func printDevBanner(cfg *config.Config, stack *devstack.Stack, fakes map[string]string, moved []string, key string, lines []string) {
	api := "http://" + cfg.API.Addr
	dir := cfg.DevStack.DataDir
	var b strings.Builder
	fmt.Fprintf(&b, "\n  taskloom dev is running (Ctrl-C stops everything)\n\n")
	fmt.Fprintf(&b, "  API            %s   (ready: %s/readyz, spec: %s/openapi.yaml)\n", api, api, api)
	fmt.Fprintf(&b, "  Echo UI        %s/ui/   console: %s/ui/console\n", api, api)
	fmt.Fprintf(&b, "  Temporal UI    %s\n", cfg.Temporal.UIURL)
	fmt.Fprintf(&b, "  Temporal gRPC  %s (namespace %s)\n", cfg.Temporal.Address, cfg.Temporal.Namespace)
	fmt.Fprintf(&b, "  API metrics    %s/metrics   worker metrics: http://%s/metrics\n", api, cfg.Worker.MetricsAddr)
	for _, m := range []map[string]string{stack.Started, fakes} {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "  %-14s %s\n", name, m[name])
		}
	}
	for _, m := range moved {
		fmt.Fprintf(&b, "  port moved     %s\n", m)
	}
	fmt.Fprintf(&b, "\n  State          kept in %s across restarts (Temporal executions, schedules and history; MongoDB);\n", dir)
	fmt.Fprintf(&b, "                 Redis and Kafka are in memory. Start clean: make dev-reset\n")
	fmt.Fprintf(&b, "  Logs           stand-ins at DEV_LOG_LEVEL=%s (DEV_LOG_LEVEL=debug shows FerretDB and Temporal)\n", cfg.DevStack.LogLevel)
	fmt.Fprintf(&b, "\n  Admin API key  %s\n", key)
	env := filepath.Join(dir, devEnvFile)
	if !filepath.IsAbs(env) {
		env = "./" + env
	}
	fmt.Fprintf(&b, "  Other shells   set -a; . %s; set +a   (then e.g. go run ./starter apikey list)\n\n", env)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintln(os.Stderr, b.String())
}

// makeCurrentTimeout bounds the wait for the dev worker's first poll.
const makeCurrentTimeout = time.Minute

// makeCurrent makes the dev worker's build the deployment's current version, as
// `temporal worker deployment set-current-version` does in a rollout.
func makeCurrent(ctx context.Context, p *platform.Platform) error {
	t := p.Config.Temporal
	cctx, cancel := context.WithTimeout(ctx, makeCurrentTimeout)
	defer cancel()
	if err := worker.SetCurrentVersion(cctx, p.Temporal, t.DeploymentName, t.BuildID()); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	p.Log.Info("worker deployment version is current", "deployment", t.DeploymentName, "build_id", t.BuildID())
	return nil
}
