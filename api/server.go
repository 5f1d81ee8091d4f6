// Package api is taskloom's HTTP API: a thin Echo layer that validates, authorizes, and calls
// Temporal or a store. Each subsystem mounts its routes from its own package under api/.
package api

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	crawlapi "github.com/taskloom/taskloom/api/crawl"
	entryapi "github.com/taskloom/taskloom/api/entry"
	"github.com/taskloom/taskloom/api/httpx"
	pipelineapi "github.com/taskloom/taskloom/api/pipeline"
	taskechoapi "github.com/taskloom/taskloom/api/taskecho"
	"github.com/taskloom/taskloom/api/ui"
	webhookapi "github.com/taskloom/taskloom/api/webhook"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/taskecho"
)

//go:embed openapi.yaml
var openapiSpec []byte

// mounters attach each subsystem's routes.
var mounters = []func(*echo.Echo, httpx.Deps) error{webhookapi.Mount, crawlapi.Mount, pipelineapi.Mount, ui.Mount, entryapi.Mount, taskechoapi.Mount}

// New builds the router over p and the process's echo service (taskecho.FromPlatform).
func New(ctx context.Context, p *platform.Platform, echoSvc *taskecho.Server) (*echo.Echo, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(p.Log)
	proxies, err := p.Config.API.TrustedProxyNets()
	if err != nil {
		return nil, fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	e.IPExtractor = clientIP(proxies)
	e.Use(middleware.RequestID(), requestLog(p.Log), middleware.Recover(),
		httpMetrics(p.Metrics), middleware.BodyLimit(p.Config.API.BodyLimit))

	// Mongo may be down at start: the API still serves /healthz and /readyz says why.
	schema.AtStart(ctx, p)
	keys := auth.NewStore(p.Mongo).WithCache(p.Config.API.KeyCacheTTL)

	e.GET("/healthz", healthz)
	e.GET("/readyz", readyz(p))
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(p.Metrics, promhttp.HandlerOpts{})))
	e.GET("/openapi.yaml", func(c echo.Context) error { return c.Blob(http.StatusOK, "application/yaml", openapiSpec) })
	docs, err := apiDocs(openapiSpec)
	if err != nil {
		return nil, err
	}
	e.GET("/docs/api", docs)

	deps := httpx.Deps{Platform: p, Echo: echoSvc, Authn: auth.Middleware(keys), Keys: keys}
	mountOps(e, deps)
	for _, m := range mounters {
		if err := m(e, deps); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogURIPath: true, LogMethod: true, LogLatency: true, LogRequestID: true,
		LogRoutePath: true, HandleError: false,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			log.Info("http", "method", v.Method, "path", v.URIPath, "route", v.RoutePath,
				"status", v.Status, "latency_ms", v.Latency.Milliseconds(), "request_id", v.RequestID)
			return nil
		},
	})
}

// Serve runs the router on API_ADDR until ctx ends, then drains within the shutdown timeout.
func Serve(ctx context.Context, p *platform.Platform, e *echo.Echo) error {
	return serveOn(ctx, p, e, "api", "API_ADDR", p.Config.API.Addr)
}

// serveOn runs a router on addr (read from the variable envName) until ctx ends, then drains
// within API_SHUTDOWN_TIMEOUT.
func serveOn(ctx context.Context, p *platform.Platform, e *echo.Echo, name, envName, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s %s: %w", envName, addr, err)
	}
	srv := httpServer(p.Config.API, e)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	p.Log.Info(name+" listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("%s server: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), p.Config.API.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s shutdown: %w", name, err)
	}
	return nil
}

// httpServer bounds what one connection may cost: a client that trickles its request, a
// handler that never answers, or an idle kept-alive connection is cut off after its timeout.
func httpServer(cfg config.API, h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: cfg.ReadTimeout,
		WriteTimeout: cfg.WriteTimeout, IdleTimeout: cfg.IdleTimeout}
}

// readHeaderTimeout bounds the request line and headers, which no legitimate client sends slowly.
const readHeaderTimeout = 10 * time.Second

// Run is the API process: build the router over p and the process's echo service, serve until
// ctx ends.
func Run(ctx context.Context, p *platform.Platform, echoSvc *taskecho.Server) error {
	e, err := New(ctx, p, echoSvc)
	if err != nil {
		return err
	}
	return Serve(ctx, p, e)
}
