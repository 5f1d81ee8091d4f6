package intake

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskloom/taskloom/internal/entry/entryprom"
)

// SuspendedMonitor watches the number of suspended tasks: it keeps the gauges current and logs a
// warning while the number is above the threshold, so tasks piling up get an operator's attention
// (docs/entry.md "Operator runbook (suspended tasks)"). It runs in the worker process.
type SuspendedMonitor struct {
	Tasks     *Tasks
	Threshold int
	Interval  time.Duration
	Metrics   *entryprom.Metrics
	Log       *slog.Logger
}

// EventSuspendedThreshold is the warning's log event.
const EventSuspendedThreshold = "entry.suspended_threshold_exceeded"

// Check counts once, updates the gauges and warns when over the threshold.
func (m *SuspendedMonitor) Check(ctx context.Context) (count int64, over bool, err error) {
	count, err = m.Tasks.CountSuspended(ctx)
	if err != nil {
		return 0, false, err
	}
	over = count > int64(m.Threshold)
	m.Metrics.Suspended.Set(float64(count))
	if over {
		m.Metrics.OverThreshold.Set(1)
		m.Log.Warn("suspended entry tasks above threshold; resume or drop them (GET /internal/tasks/suspended)",
			"event", EventSuspendedThreshold, "suspended", count, "threshold", m.Threshold)
	} else {
		m.Metrics.OverThreshold.Set(0)
	}
	return count, over, nil
}

// Run checks every Interval until ctx ends. A failed check (Temporal down) is logged and retried
// at the next tick rather than stopping the worker.
func (m *SuspendedMonitor) Run(ctx context.Context) error {
	tick := time.NewTicker(m.Interval)
	defer tick.Stop()
	for {
		if _, _, err := m.Check(ctx); err != nil && ctx.Err() == nil {
			m.Log.Warn("suspended task check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
