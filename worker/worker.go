// Package worker is the Temporal worker process: it registers every taskloom workflow and
// activity on one task queue, runs the background services that feed workflows (Kafka
// consumers), and serves the SDK's Prometheus metrics.
package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// registrar registers one subsystem's workflows and activities.
type registrar func(w sdkworker.Registry, p *platform.Platform) error

// registrars lists every subsystem but TaskEcho; each lives in worker/<subsystem>.go. TaskEcho's
// registration (worker/taskecho.go) takes the process's TaskEcho service, which New receives.
var registrars = []registrar{registerWebhook, registerCrawl, registerPipeline, registerEntry}

// service is a long-running loop the worker process hosts beside the Temporal worker.
type service func(ctx context.Context, p *platform.Platform) error

// services lists the background loops (e.g. the crawl Kafka consumers).
var services = []service{runCrawlConsumers, runEntryMonitor, runReconciler}

// New builds a worker on the configured task queue with every subsystem registered, echo's
// activities over the process's echo service (taskecho.FromPlatform). With
// TEMPORAL_WORKER_VERSIONING it is the configured build of the deployment (versioning.go).
func New(p *platform.Platform, echoSvc *taskecho.Server) (sdkworker.Worker, error) {
	return NewBuild(p, echoSvc, p.Config.Temporal.BuildID())
}

// NewBuild is New as build buildID of the deployment, when Worker Versioning is on (a rollout
// test runs two builds in one process).
func NewBuild(p *platform.Platform, echoSvc *taskecho.Server, buildID string) (sdkworker.Worker, error) {
	w := sdkworker.New(p.Temporal, p.Config.Temporal.TaskQueue, sdkworker.Options{
		DeploymentOptions: deploymentOptions(p.Config.Temporal, buildID),
		Interceptors:      []interceptor.WorkerInterceptor{},
		// Let in-flight activities finish on a graceful stop before they are cancelled.
		WorkerStopTimeout: p.Config.Worker.StopTimeout,
		// Take only what this worker can run: the rest of a backlog waits on the server, which
		// hands it out fairly across users (docs/pipelines.md "Fair under load").
		MaxConcurrentWorkflowTaskExecutionSize: p.Config.Worker.MaxConcurrentWorkflowTasks,
		MaxConcurrentActivityExecutionSize:     p.Config.Worker.MaxConcurrentActivities,
	})
	for _, r := range registrars {
		if err := r(w, p); err != nil {
			return nil, fmt.Errorf("register: %w", err)
		}
	}
	registerEcho(w, p, echoSvc)
	return w, nil
}

// Run starts the worker, its background services and its metrics endpoint, and stops them all
// when ctx ends.
func Run(ctx context.Context, p *platform.Platform, echoSvc *taskecho.Server) error {
	// The listener first: a worker whose metrics address is taken fails before it polls a task.
	ln, err := listenMetrics(p.Config.Worker.MetricsAddr)
	if err != nil {
		return err
	}
	if ln != nil {
		defer ln.Close() // on the early returns; after Serve it is already closed
	}
	schema.AtStart(ctx, p)
	w, err := New(p, echoSvc)
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker on %s: %w", p.Config.Temporal.TaskQueue, err)
	}
	defer w.Stop()
	p.Log.Info("worker started", "task_queue", p.Config.Temporal.TaskQueue, "worker_versioning", p.Config.Temporal.WorkerVersioning,
		"deployment", p.Config.Temporal.DeploymentName, "build_id", p.Config.Temporal.BuildID())

	g, gctx := errgroup.WithContext(ctx)
	for _, s := range services {
		g.Go(func() error { return s(gctx, p) })
	}
	g.Go(func() error { return serveMetrics(gctx, p, ln) })
	return g.Wait()
}

// RunServices runs only the background services (tests that bring their own worker use it).
func RunServices(ctx context.Context, p *platform.Platform) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range services {
		g.Go(func() error { return s(gctx, p) })
	}
	return g.Wait()
}

// listenMetrics listens on WORKER_METRICS_ADDR; empty turns the endpoint off (nil listener).
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("WORKER_METRICS_ADDR %s (set it to a free address): %w", addr, err)
	}
	return ln, nil
}

// serveMetrics serves /metrics on ln until ctx ends; a nil ln waits for ctx.
func serveMetrics(ctx context.Context, p *platform.Platform, ln net.Listener) error {
	if ln == nil {
		<-ctx.Done()
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(p.Metrics, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("worker metrics: %w", err)
	}
	return nil
}
