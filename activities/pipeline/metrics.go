package pipeline

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
)

// Metrics are the pipeline activities' Prometheus series (served on the worker's /metrics).
type Metrics struct {
	VendorCalls   *prometheus.CounterVec   // provider, outcome (ok|error)
	VendorLatency *prometheus.HistogramVec // provider
	TasksFinished *prometheus.CounterVec   // status
	Refunds       prometheus.Counter
}

// NewMetrics registers (or reuses) the series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
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
