package api

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
)

// httpMetrics counts requests and their latency by route template (never by raw path, whose
// ids would explode the label space).
func httpMetrics(reg prometheus.Registerer) echo.MiddlewareFunc {
	requests := platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskloom_http_requests_total", Help: "HTTP requests by method, route and status.",
	}, []string{"method", "route", "status"}))
	latency := platform.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "taskloom_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"}))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err) // render now so the recorded status is the real one
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			requests.WithLabelValues(c.Request().Method, route, strconv.Itoa(c.Response().Status)).Inc()
			latency.WithLabelValues(c.Request().Method, route).Observe(time.Since(start).Seconds())
			return nil
		}
	}
}
