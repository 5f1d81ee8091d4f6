// Package crawlprom holds the crawl consumers' Prometheus series (served on the worker's
// /metrics): records by topic and result, completions signalled, batch retries and batch time.
package crawlprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/platform"
)

// Metrics are the consumers' Prometheus series. A nil *Metrics records
// nothing, for tests that do not look at them.
type Metrics struct {
	records      *prometheus.CounterVec
	completions  prometheus.Counter
	batchRetries prometheus.Counter
	batchSeconds prometheus.Histogram
}

// New registers the series on reg (tolerating a second registration
// when tests build two consumers in one process).
func New(reg prometheus.Registerer) *Metrics {
	return &Metrics{
		records: platform.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskloom_crawl_records_total",
			Help: "Crawl records processed, by topic and result (initialized, counted, duplicate, dead_lettered).",
		}, []string{"topic", "result"})),
		completions: platform.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskloom_crawl_completions_total",
			Help: "Crawl tasks whose completion was signalled to their workflow.",
		})),
		batchRetries: platform.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskloom_crawl_batch_retries_total",
			Help: "Partition batches retried because a dependency (Kafka, Redis, Temporal) failed.",
		})),
		batchSeconds: platform.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "taskloom_crawl_batch_seconds",
			Help:    "Time to process one partition batch: preparing it (dead letters, replies) plus counting it (Redis, signals), without the wait between.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
		})),
	}
}

// Records counts n records of a topic with one result.
func (m *Metrics) Records(topic, result string, n int) {
	if m != nil && n > 0 {
		m.records.WithLabelValues(topic, result).Add(float64(n))
	}
}

// Completed counts one completion signalled to a task's workflow.
func (m *Metrics) Completed() {
	if m != nil {
		m.completions.Inc()
	}
}

// Retried counts one partition batch retried after a failure.
func (m *Metrics) Retried() {
	if m != nil {
		m.batchRetries.Inc()
	}
}

// Batch observes how long one partition batch took: its preparing and its
// counting, without the time it waited between the two.
func (m *Metrics) Batch(d time.Duration) {
	if m != nil {
		m.batchSeconds.Observe(d.Seconds())
	}
}
