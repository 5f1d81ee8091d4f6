// Package entryprom holds the Prometheus series of the entry subsystem.
package entryprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
)

// Metrics are the intake's Prometheus series.
type Metrics struct {
	// Submitted counts accepted envelopes by channel and outcome (created|duplicate).
	Submitted *prometheus.CounterVec
	// EnqueueFailed counts envelopes refused because Temporal or Mongo did not answer.
	EnqueueFailed *prometheus.CounterVec
	// Suspended is the number of suspended tasks the last check saw; OverThreshold is 1 while it
	// is above ENTRY_SUSPENDED_ALERT_THRESHOLD (alert on it).
	Suspended     prometheus.Gauge
	OverThreshold prometheus.Gauge
}

// New registers the series on reg (sharing them when they already exist).
func New(reg prometheus.Registerer) *Metrics {
	return &Metrics{
		Submitted: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_entry_submitted_total", Help: "Envelopes accepted by the entry intake."}, []string{"channel", "outcome"})),
		EnqueueFailed: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_entry_enqueue_failed_total", Help: "Envelopes refused because a dependency did not answer (queue.enqueue_failed)."}, []string{"channel", "dependency"})),
		Suspended: platform.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "taskloom_entry_suspended_tasks", Help: "Suspended entry tasks waiting for an operator."})),
		OverThreshold: platform.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "taskloom_entry_suspended_over_threshold", Help: "1 while suspended entry tasks exceed ENTRY_SUSPENDED_ALERT_THRESHOLD."})),
	}
}
