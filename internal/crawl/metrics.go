package crawl

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

// resultDeadLettered is the result of every dead-lettered record, each
// delivery counted (the script's ResultDeadLettered counts distinct ones,
// and only those naming a task).
const resultDeadLettered = string(ResultDeadLettered)

// NewMetrics registers the series on reg (tolerating a second registration
// when tests build two consumers in one process).
func NewMetrics(reg prometheus.Registerer) *Metrics {
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
			Help:    "Time to process one partition batch (dead letters, replies, counting, signals).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
		})),
	}
}

func (m *Metrics) record(topic, result string) {
	if m != nil {
		m.records.WithLabelValues(topic, result).Inc()
	}
}

func (m *Metrics) completed() {
	if m != nil {
		m.completions.Inc()
	}
}

func (m *Metrics) retried() {
	if m != nil {
		m.batchRetries.Inc()
	}
}

func (m *Metrics) batch(d time.Duration) {
	if m != nil {
		m.batchSeconds.Observe(d.Seconds())
	}
}
