// Command bench is `make bench`: it starts the embedded stack (Temporal dev server, FerretDB,
// Redis or miniredis, kfake, the Feishu emulator and the in-repo fakes), runs the worker and the
// API as separate processes of the real binary, drives each scenario against them, measures a
// baseline on the same servers in the same run, prints the table and writes bench/results.json.
//
// BENCH_SCALE (default 1) multiplies every scenario's size; the default run takes a few minutes
// on a 2-core machine. BENCH_ONLY=pull,apply runs only the named scenarios (results.json is
// then written only when every scenario ran, so a partial run never replaces the full table).
// BENCH_ONLY=scale runs the scale series (sizes from BENCH_SCALE_SIZES, scen_scale.go), which a
// full run leaves out, and writes its rows into results.json beside the full run's.
// BENCH_TARGET=cluster drives the stack `make cluster` started (CLUSTER_DIR, default .data/cluster;
// target.go) instead of starting one; its figures are printed, never written to results.json,
// which holds the dev stack's.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
)

// run is what every scenario gets: the servers, the app processes, a platform over the same
// configuration (for baselines and seeding), an admin key and the size multiplier.
type run struct {
	root      string
	stack     *stack
	app       *app
	p         *platform.Platform
	echo      *taskecho.Server // the run's one echo service, over p
	adminKey  string
	scale     float64
	noopQueue string
}

// size scales a scenario's default size, never below min.
func (r *run) size(n, min int) int {
	return max(int(float64(n)*r.scale), min)
}

type scenario struct {
	name string
	run  func(ctx context.Context, r *run) []Result
	// optIn runs the scenario only when BENCH_ONLY names it (the scale series takes minutes).
	optIn bool
}

var scenarios = []scenario{
	{"pipeline", benchPipeline, false},
	{"noisy", benchNoisy, false},
	{"pull", benchPull, false},
	{"append", benchAppend, false},
	{"crawl", benchCrawl, false},
	{"webhook", benchWebhook, false},
	{"queueop", benchQueueOp, false},
	// Last: every accepted apply keeps an entry workflow running after its 202.
	{"apply", benchApply, false},
	{"scale", benchScale, true},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mainErr(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context) error {
	scale := 1.0
	if v := os.Getenv("BENCH_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("BENCH_SCALE=%q: want a positive number", v)
		}
		scale = f
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	started := time.Now()
	s, a, closeTarget, err := openTarget(ctx, root)
	if err != nil {
		return err
	}
	defer closeTarget()
	r, cleanup, err := newRun(ctx, root, s, a, scale)
	if err != nil {
		return err
	}
	defer cleanup()
	// A schedule left running only makes the command figures upper bounds, so it is reported,
	// not fatal. Those paused here are resumed however the run ends: a cluster outlives it.
	paused, err := pauseSchedules(ctx, r.p.Temporal)
	logf("paused the schedules %v: background work stays out of the metered windows (%v)", paused, err)
	defer resumeSchedules(r.p.Temporal, paused)

	rep := &report{Started: started, Scale: scale, Host: host()}
	only := os.Getenv("BENCH_ONLY") // comma-separated scenario names, for iterating on one
	for _, sc := range scenarios {
		named := slices.Contains(strings.Split(only, ","), sc.name)
		if (only != "" || sc.optIn) && !named {
			continue
		}
		if why, ok := clusterSkips[sc.name]; ok && s.target == targetCluster {
			logf("scenario %s skipped: %s", sc.name, why)
			rep.Results = append(rep.Results, Result{Scenario: sc.name, Skipped: "BENCH_TARGET=cluster: " + why})
			continue
		}
		logf("scenario %s", sc.name)
		rep.Results = append(rep.Results, sc.run(ctx, r)...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep.Results = append(rep.Results, benchMemory(a))
	rep.Floors = checkFloors(rep.Results)
	rep.Duration = time.Since(started).Round(time.Second).String()
	fmt.Println()
	rep.print(os.Stdout)
	printFloors(os.Stdout, rep.Floors)
	printBreakdown(os.Stdout, rep.Results)
	fmt.Printf("\nscale %.2g, target %s, redis: %s, total %s\n", scale, s.target, s.redisName(), rep.Duration)
	if md := os.Getenv("BENCH_MARKDOWN"); md != "" {
		f, err := os.Create(md)
		if err != nil {
			return err
		}
		rep.markdown(f)
		_ = f.Close()
	}
	if s.target == targetCluster {
		return nil
	}
	if only == "scale" {
		return mergeScaleRows(filepath.Join(root, "bench", "results.json"), rep.Results[:len(rep.Results)-1])
	}
	if only != "" {
		return nil
	}
	return rep.writeJSON(filepath.Join(root, "bench", "results.json"))
}

// openTarget starts the dev stack and the app, or reaches the cluster (BENCH_TARGET=cluster); the
// function it returns stops what it started.
func openTarget(ctx context.Context, root string) (*stack, *app, func(), error) {
	switch target := os.Getenv("BENCH_TARGET"); target {
	case "", "dev":
	case targetCluster:
		t, err := loadCluster(root, cmp.Or(os.Getenv("CLUSTER_DIR"), filepath.Join(".data", "cluster")))
		if err != nil {
			return nil, nil, nil, err
		}
		logf("driving the cluster of %s: API %s, Temporal %s", t.dir, t.apis[0], t.cfg.Temporal.Address)
		s, a, err := t.connect()
		return s, a, func() {}, err
	default:
		return nil, nil, nil, fmt.Errorf("BENCH_TARGET=%q: want dev or %s", target, targetCluster)
	}
	logf("building ./starter")
	bin, err := buildStarter(ctx, root)
	if err != nil {
		return nil, nil, nil, err
	}
	logf("starting the stack")
	s, err := startStack(ctx, root)
	if err != nil {
		return nil, nil, nil, err
	}
	a, err := startApp(ctx, s, bin)
	if err != nil {
		s.close()
		return nil, nil, nil, err
	}
	return s, a, func() { a.stop(); s.close() }, nil
}

// newRun opens a platform over the stack's configuration, creates the admin key, and runs the
// baseline's own worker on its own task queue.
func newRun(ctx context.Context, root string, s *stack, a *app, scale float64) (*run, func(), error) {
	p, err := platform.Open(ctx, s.cfg, logging.NewTo(io.Discard, "error"))
	if err != nil {
		return nil, nil, err
	}
	key := a.adminKey
	if key == "" {
		if _, key, err = auth.NewStore(p.Mongo).Create(ctx, auth.NewKey{Name: "bench-admin", Permission: auth.PermAdmin}); err != nil {
			p.Close()
			return nil, nil, fmt.Errorf("create bench admin key: %w", err)
		}
	}
	svc, err := taskechowire.FromPlatform(p)
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("echo service: %w", err)
	}
	r := &run{root: root, stack: s, app: a, p: p, echo: svc, adminKey: key, scale: scale, noopQueue: "bench-noop-" + suffix()}
	w := sdkworker.New(p.Temporal, r.noopQueue, sdkworker.Options{})
	w.RegisterWorkflow(BenchNoopWorkflow)
	w.RegisterWorkflow(BenchNoop3Workflow)
	w.RegisterActivity(NoopActivity)
	if err := w.Start(); err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("start baseline worker: %w", err)
	}
	return r, func() { w.Stop(); p.Close() }, nil
}

// noopOptions starts one baseline workflow.
func (r *run) noopOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: r.noopQueue}
}

// hasRoute asks the running API whether a route exists: an unknown route answers 404
// RESOURCE_NOT_FOUND "route not found", a known one anything else (an empty body is a 400).
func (r *run) hasRoute(ctx context.Context, method, path string) bool {
	status, err := call(ctx, method, r.app.apiURL+path, r.adminKey, nil, nil)
	if err == nil || status != 404 {
		return status != 0
	}
	return !strings.Contains(err.Error(), "route not found")
}

func host() string {
	h, _ := os.Hostname()
	return h
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
