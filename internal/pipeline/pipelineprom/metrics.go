// Package pipelineprom holds the pipelines' Prometheus series (served on the worker's /metrics):
// vendor calls, finished tasks, quota refunds and the providers' circuit breakers.
package pipelineprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
)

// Metrics are the pipeline worker's series.
type Metrics struct {
	VendorCalls   *prometheus.CounterVec   // provider, outcome (ok|error)
	VendorLatency *prometheus.HistogramVec // provider
	TasksFinished *prometheus.CounterVec   // status
	Refunds       prometheus.Counter
	Circuits      *prometheus.GaugeVec // provider: 0 closed, 1 open, 2 half_open
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
		Circuits: platform.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "taskloom_provider_circuit_state",
			Help: "A provider's circuit breaker as this worker last saw it: 0 closed, 1 open, 2 half_open.",
		}, []string{"provider"})),
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

// circuitValues are the gauge values of the circuit breaker states.
var circuitValues = map[string]float64{pipeline.CircuitClosed: 0, pipeline.CircuitOpen: 1, pipeline.CircuitHalfOpen: 2}

// CircuitState sets a provider's circuit breaker gauge.
func (m *Metrics) CircuitState(provider, state string) {
	m.Circuits.WithLabelValues(provider).Set(circuitValues[state])
}

// QuotaRefunded counts a quota unit given back.
func (m *Metrics) QuotaRefunded() { m.Refunds.Inc() }
