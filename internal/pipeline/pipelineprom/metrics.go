// Package pipelineprom holds the pipelines' Prometheus series (served on the worker's /metrics):
// vendor calls, finished tasks and quota refunds.
package pipelineprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
)

// Metrics are the pipeline worker's series.
type Metrics struct {
	VendorCalls   *prometheus.CounterVec   // provider, outcome (ok|error)
	VendorLatency *prometheus.HistogramVec // provider
	TasksFinished *prometheus.CounterVec   // status
	Refunds       prometheus.Counter
}

// New registers (or reuses) the series on reg.
func New(reg prometheus.Registerer) *Metrics {
	return &Metrics{
		VendorCalls: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_pipeline_vendor_calls_total", Help: "Vendor and SCF HTTP calls by provider and outcome.",
		}, []string{"provider", "outcome"})),
		VendorLatency: platform.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "taskloom_pipeline_vendor_call_seconds", Help: "Vendor and SCF HTTP call latency.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}, []string{"provider"})),
		TasksFinished: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_pipeline_tasks_finished_total", Help: "Pipeline tasks that reached a final status.",
		}, []string{"status"})),
		Refunds: platform.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskloom_pipeline_quota_refunds_total", Help: "Quota units returned for failed tasks (each at most once).",
		})),
	}
}

// VendorCall counts one vendor or SCF call and its latency.
func (m *Metrics) VendorCall(provider string, ok bool, elapsed time.Duration) {
	outcome := "ok"
	if !ok {
		outcome = "error"
	}
	m.VendorCalls.WithLabelValues(provider, outcome).Inc()
	m.VendorLatency.WithLabelValues(provider).Observe(elapsed.Seconds())
}

// TaskFinished counts a task that reached a final status.
func (m *Metrics) TaskFinished(status string) { m.TasksFinished.WithLabelValues(status).Inc() }

// QuotaRefunded counts a quota unit given back.
func (m *Metrics) QuotaRefunded() { m.Refunds.Inc() }
