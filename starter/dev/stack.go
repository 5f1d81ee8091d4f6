package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/starter/cli"
	"github.com/taskloom/taskloom/worker"
)

// devDataDir holds the embedded database files and the generated admin key.
const devDataDir = ".data"

// devFake starts one in-repo fake of an external service for `make dev`, points cfg at it and
// returns its name and URL; each subsystem lists its fakes in devFakes.
type devFake func(ctx context.Context, cfg *config.Config, log *slog.Logger) (name, url string, err error)

var devFakes = []devFake{devFeishu, devSummaryReceiver, devCrawler, devPipelineFakes, devTelegram}

// devSeeder loads demo data once the platform is up and returns lines to print (e.g. a curl).
type devSeeder func(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error)

// devSeeders lists every subsystem's seeder; echo's seeds through the process's echo service.
func devSeeders(echoSvc *taskecho.Server) []devSeeder {
	return []devSeeder{devPipelineSeed, devEntrySeed, devEchoSeed(echoSvc)}
}

func runDev(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if !cfg.Dev() {
		return errors.New("TASKLOOM_ENV must be dev for the dev stack")
	}
	log := logging.New(cfg.LogLevel)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var temporalDone <-chan error
	if os.Getenv("TEMPORAL_ADDRESS") == "" {
		if temporalDone, err = startTemporalDev(ctx, cfg.Temporal.Address); err != nil {
			return err
		}
	}
	stack, err := devstack.Start(ctx, cfg, devstack.Options{DataDir: devDataDir, Log: logging.New("warn").With("component", "ferretdb")})
	if err != nil {
		return err
	}
	defer stack.Close()
	fakes := map[string]string{}
	for _, f := range devFakes {
		name, url, err := f(ctx, cfg, log)
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
	if err := schema.Ensure(ctx, p.Mongo); err != nil {
		return err
	}
	adminKey, err := ensureDevAdminKey(ctx, p)
	if err != nil {
		return err
	}
	if _, err := cli.ApplySchedules(ctx, p.Temporal, cfg); err != nil {
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
	if temporalDone != nil {
		g.Go(func() error {
			select {
			case err := <-temporalDone:
				return fmt.Errorf("temporal dev server exited: %v", err)
			case <-gctx.Done():
				return nil
			}
		})
	}
	printDevBanner(cfg, stack, fakes, adminKey, lines)
	err = g.Wait()
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "taskloom dev: stopping")
		return nil
	}
	return err
}

// startTemporalDev runs ./temporal-dev.sh in its own process group (so Ctrl-C reaches it once,
// through us) and waits until the frontend accepts connections.
func startTemporalDev(ctx context.Context, addr string) (<-chan error, error) {
	script, err := filepath.Abs("temporal-dev.sh")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(script)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start temporal-dev.sh: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	go func() {
		<-ctx.Done()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	deadline := time.Now().Add(10 * time.Minute) // the first run builds the CLI
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return done, nil
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("temporal-dev.sh exited before %s answered: %v", addr, err)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("temporal dev server did not answer on %s", addr)
		}
	}
}

// ensureDevAdminKey makes TASKLOOM_ADMIN_KEY, or a key generated once and kept in .data, an
// active admin key.
func ensureDevAdminKey(ctx context.Context, p *platform.Platform) (string, error) {
	store := auth.NewStore(p.Mongo)
	key := p.Config.API.AdminKey
	path := filepath.Join(devDataDir, "admin-key")
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

// devEnvFile keeps the addresses `make dev` chose, for starter commands run from another shell.
var devEnvFile = filepath.Join(devDataDir, "dev.env")

// writeDevEnv writes the connection settings the dev stack filled in as KEY='value' lines, so that
// `set -a; . ./.data/dev.env; set +a` lets `starter apikey`, `schedules`, `crawl start`,
// `webhook-*` … reach the same servers.
func writeDevEnv(cfg *config.Config) error {
	w := cfg.Webhook
	vars := []struct{ k, v string }{
		{"TEMPORAL_ADDRESS", cfg.Temporal.Address}, {"TEMPORAL_NAMESPACE", cfg.Temporal.Namespace},
		{"MONGO_URI", cfg.Mongo.URI}, {"MONGO_DATABASE", cfg.Mongo.Database}, {"REDIS_URL", cfg.Redis.URL},
		{"KAFKA_BROKERS", strings.Join(cfg.Kafka.Brokers, ",")},
		{"FEISHU_APP_ID", w.FeishuAppID}, {"FEISHU_APP_SECRET", w.FeishuAppSecret}, {"FEISHU_BASE_URL", w.FeishuBaseURL},
		{"TASK_BITABLE_URL", w.TaskBitableURL}, {"WEBHOOK_BITABLE_URL", w.WebhookBitableURL},
		{"DRAMA_BITABLE_URL", w.DramaBitableURL}, {"CAPTURE_BITABLE_URL", w.CaptureBitableURL},
		{"SUMMARY_WEBHOOK_URL", w.SummaryWebhookURL},
	}
	var b strings.Builder
	b.WriteString("# written by `make dev`: set -a; . ./.data/dev.env; set +a\n")
	for _, kv := range vars {
		fmt.Fprintf(&b, "%s='%s'\n", kv.k, strings.ReplaceAll(kv.v, "'", `'\''`))
	}
	if err := os.MkdirAll(devDataDir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", devEnvFile, err)
	}
	if err := os.WriteFile(devEnvFile, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", devEnvFile, err)
	}
	return nil
}

func printDevBanner(cfg *config.Config, stack *devstack.Stack, fakes map[string]string, key string, lines []string) {
	api := "http://" + cfg.API.Addr
	var b strings.Builder
	fmt.Fprintf(&b, "\n  taskloom dev is running (Ctrl-C stops everything)\n\n")
	fmt.Fprintf(&b, "  API            %s   (ready: %s/readyz, spec: %s/openapi.yaml)\n", api, api, api)
	fmt.Fprintf(&b, "  Echo UI        %s/ui/\n", api)
	fmt.Fprintf(&b, "  Temporal UI    http://127.0.0.1:8233\n")
	fmt.Fprintf(&b, "  Temporal gRPC  %s (namespace %s)\n", cfg.Temporal.Address, cfg.Temporal.Namespace)
	fmt.Fprintf(&b, "  API metrics    %s/metrics   worker metrics: http://%s/metrics\n", api, cfg.Worker.MetricsAddr)
	for name, url := range stack.Started {
		fmt.Fprintf(&b, "  %-14s %s\n", name, url)
	}
	for name, url := range fakes {
		fmt.Fprintf(&b, "  %-14s %s\n", name, url)
	}
	fmt.Fprintf(&b, "\n  Admin API key  %s\n", key)
	fmt.Fprintf(&b, "  Other shells   set -a; . ./%s; set +a   (then e.g. go run ./starter apikey list)\n\n", devEnvFile)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintln(os.Stderr, b.String())
}
