// Package taskechoprom holds the task server's Prometheus series (served on /metrics):
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
package taskechoprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/pulllimit"
)

// Metrics are the task server's collectors; they implement taskecho.Metrics.
type Metrics struct {
	PullRequests    *prometheus.CounterVec
	PulledTasks     *prometheus.CounterVec
	LeasesClosed    *prometheus.CounterVec
	PullToPushTime  prometheus.Histogram
	OverdueLeaseNow prometheus.Gauge
	RateLimited     *prometheus.CounterVec
	QueueOperations *prometheus.CounterVec
	RateLimitErrors prometheus.Counter
}

var _ taskecho.Metrics = (*Metrics)(nil)

// New registers the collectors on reg (a fresh registry when nil). Registering twice on the same
// registry (API and worker in one dev process) reuses the existing collectors.
func New(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	return &Metrics{
		PullRequests: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_pull_requests_total", Help: "Pull calls, by project and queue (\"\" = the project's own tasks).",
		}, []string{"project", "queue"})),
		PulledTasks: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_pulled_tasks_total", Help: "Tasks handed out by pulls, by project.",
		}, []string{"project"})),
		LeasesClosed: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_leases_closed_total",
			Help: "Pull leases ended, by outcome: success (push or confirm), released, timeout, server, queue-op.",
		}, []string{"outcome"})),
		PullToPushTime: platform.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "taskloom_echo_pull_to_push_seconds", Help: "Time from pull to push/confirm.",
			Buckets: []float64{1, 5, 30, 60, 300, 900, 1800, 3600, 7200, 21600},
		})),
		OverdueLeaseNow: platform.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "taskloom_echo_overdue_leases", Help: "Leases past pull_timeout at the last sweep, before release.",
		})),
		RateLimited: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_rate_limited_total", Help: "Pull calls refused with 429, by reason.",
		}, []string{"reason"})),
		QueueOperations: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_echo_queue_operations_total", Help: "Queue operations, by operation.",
		}, []string{"operation"})),
		RateLimitErrors: platform.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskloom_echo_ratelimit_errors_total", Help: "Limiter failures (Redis unreachable); the request was let through.",
		})),
	}
}

// PullRequested counts one pull call.
func (m *Metrics) PullRequested(project, queue string) {
	m.PullRequests.WithLabelValues(project, queue).Inc()
}

// TasksPulled counts the tasks one pull handed out.
func (m *Metrics) TasksPulled(project string, n int) {
	m.PulledTasks.WithLabelValues(project).Add(float64(n))
}

// LeaseClosed counts one ended lease.
func (m *Metrics) LeaseClosed(outcome string) { m.LeasesClosed.WithLabelValues(outcome).Inc() }

// PullToPush observes a pull→push/confirm duration.
func (m *Metrics) PullToPush(d time.Duration) { m.PullToPushTime.Observe(d.Seconds()) }

// OverdueLeases sets the overdue-lease gauge.
func (m *Metrics) OverdueLeases(n int) { m.OverdueLeaseNow.Set(float64(n)) }

// QueueOperation counts one queue operation.
func (m *Metrics) QueueOperation(op string) { m.QueueOperations.WithLabelValues(op).Inc() }

// Limiter are the pull limiter's counters.
func (m *Metrics) Limiter() pulllimit.Metrics {
	return pulllimit.Metrics{Refused: m.RateLimited, Failures: m.RateLimitErrors}
}
