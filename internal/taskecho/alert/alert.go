// Package alert is the echo alert rules ("告警规则") and what one evaluation saw, apart
// from the audit-log query that evaluates them (CheckAlerts in internal/taskecho/stats): the
// PullLeaseSweeper's activities take the rules and its result carries the report. It opens no connection, so
// workflows/taskecho can import it.
package alert

import "time"

// Thresholds are the alert rules. They are evaluated by the sweeper once a run over the last
// Window of audit_log, and every breach is a WARN log line with alert=<name>, which log-based
// alerting can match. Zero disables a rule.
type Thresholds struct {
	Window time.Duration
	// MinSuccessRate: successful lease endings (confirm, push) over all endings below this.
	MinSuccessRate float64
	// MaxTimeouts: leases released by timeout within the window above this.
	MaxTimeouts int
	// MaxPullsPerKeyPerMinute: one API key pulling more often than this (possible abuse); checked
	// by the rate limiter on every pull.
	MaxPullsPerKeyPerMinute int
	// MaxQueueOps: queue operations within the window above this.
	MaxQueueOps int
}

// Report is what one evaluation of the Thresholds saw.
type Report struct {
	Successes int      `json:"successes"`
	Failures  int      `json:"failures"`
	Timeouts  int      `json:"timeouts"`
	QueueOps  int      `json:"queue_ops"`
	Breaches  []string `json:"breaches"`
}
