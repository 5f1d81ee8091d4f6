package taskecho

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the seed's "监控指标" as Prometheus collectors.
//
//   - pull requests by project and queue:          taskloom_echo_pull_requests_total
//   - tasks handed out:                            taskloom_echo_pulled_tasks_total
//   - pull success rate = leases ended by push or confirm over all ended leases:
//     taskloom_echo_leases_closed_total{outcome="success"} / sum(taskloom_echo_leases_closed_total)
//   - pull→push duration:                          taskloom_echo_pull_to_push_seconds
//   - pull timeouts (leases the sweeper released): taskloom_echo_leases_closed_total{outcome="timeout"},
//     and leases currently past their timeout:    taskloom_echo_overdue_leases
//   - rate-limit hits:                             taskloom_echo_rate_limited_total{reason}
//   - queue operations:                            taskloom_echo_queue_operations_total{operation}
//   - limiter failures (Redis down, fail open):    taskloom_echo_ratelimit_errors_total
type Metrics struct {
	PullRequests    *prometheus.CounterVec
	PulledTasks     *prometheus.CounterVec
	LeasesClosed    *prometheus.CounterVec
	PullToPush      prometheus.Histogram
	OverdueLeases   prometheus.Gauge
	RateLimited     *prometheus.CounterVec
	QueueOperations *prometheus.CounterVec
	RateLimitErrors prometheus.Counter
}

// NewMetrics registers the collectors on reg (a fresh registry when nil). Registering twice on
// the same registry (API and worker in one dev process) reuses the existing collectors.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		PullRequests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_pull_requests_total", Help: "Pull calls, by project and queue (\"\" = the project's own tasks).",
		}, []string{"project", "queue"})),
		PulledTasks: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_pulled_tasks_total", Help: "Tasks handed out by pulls, by project.",
		}, []string{"project"})),
		LeasesClosed: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_leases_closed_total",
			Help: "Pull leases ended, by outcome: success (push or confirm), released, timeout, server, queue-op.",
		}, []string{"outcome"})),
		PullToPush: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "taskloom_echo_pull_to_push_seconds", Help: "Time from pull to push/confirm.",
			Buckets: []float64{1, 5, 30, 60, 300, 900, 1800, 3600, 7200, 21600},
		})),
		OverdueLeases: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "taskloom_echo_overdue_leases", Help: "Leases past pull_timeout at the last sweep, before release.",
		})),
		RateLimited: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_rate_limited_total", Help: "Pull calls refused with 429, by reason.",
		}, []string{"reason"})),
		QueueOperations: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_queue_operations_total", Help: "Queue operations, by operation.",
		}, []string{"operation"})),
		RateLimitErrors: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskloom_echo_ratelimit_errors_total", Help: "Limiter failures (Redis unreachable); the request was let through.",
		})),
	}
	return m
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// closeOutcome maps a release reason (and success) to the leases_closed outcome label.
func closeOutcome(reason string, success bool) string {
	switch {
	case success:
		return "success"
	case reason == ReleaseClient:
		return "released"
	default:
		return reason
	}
}
