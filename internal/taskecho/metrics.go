package taskecho

import "time"

// Metrics receives what the task server counts; package taskechoprom publishes it as Prometheus
// series (docs/taskecho.md).
type Metrics interface {
	// PullRequested counts one pull call of a project and queue ("" = the project level).
	PullRequested(project, queue string)
	// TasksPulled counts the tasks one pull handed out.
	TasksPulled(project string, n int)
	// LeaseClosed counts one ended lease by outcome: success (push or confirm), released,
	// timeout, server or queue-op.
	LeaseClosed(outcome string)
	// PullToPush observes the time from a pull to the push or confirm that ended its lease.
	PullToPush(d time.Duration)
	// OverdueLeases publishes how many leases are past their timeout at the last sweep.
	OverdueLeases(n int)
	// QueueOperation counts one queue operation.
	QueueOperation(op string)
}

// NopMetrics counts nothing.
type NopMetrics struct{}

func (NopMetrics) PullRequested(string, string) {}
func (NopMetrics) TasksPulled(string, int)      {}
func (NopMetrics) LeaseClosed(string)           {}
func (NopMetrics) PullToPush(time.Duration)     {}
func (NopMetrics) OverdueLeases(int)            {}
func (NopMetrics) QueueOperation(string)        {}

// closeOutcome maps a release reason (and success) to the outcome LeaseClosed counts.
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
