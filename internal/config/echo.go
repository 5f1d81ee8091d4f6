package config

import (
	"errors"
	"fmt"
	"time"
)

// Echo configures the TaskEcho-compatible task server; each variable stands for one of
// TaskEcho's settings (docs/taskecho.md "Settings and TaskEcho's seed items").
type Echo struct {
	// How long a pulled task stays leased. After it the lease is over: it no longer blocks a pull, a
	// release or confirm of it answers 409 `LEASE_EXPIRED` and changes nothing (before and after a
	// sweep), and the PullLeaseSweeper releases it (`released_by: timeout`). Applies to leases taken
	// after a change.
	PullTimeout time.Duration `env:"ECHO_PULL_TIMEOUT" envDefault:"1h"`
	// Pull calls per API key per minute (0 = off). Over it: 429 `RATE_LIMIT_EXCEEDED` + `Retry-After`.
	PullRateLimitPerMinute int `env:"ECHO_PULL_RATE_LIMIT_PER_MINUTE" envDefault:"60"`
	// Pull calls per API key per hour (0 = off).
	PullRateLimitPerHour int `env:"ECHO_PULL_RATE_LIMIT_PER_HOUR" envDefault:"1000"`
	// Tasks one API key may pull per UTC day (0 = unlimited). A pull is capped at what is left; at 0
	// the pull is a 429.
	PullQuota int `env:"ECHO_PULL_QUOTA" envDefault:"10000"`
	// Minimum time between two pulls of one API key (0 = none).
	PullMinInterval time.Duration `env:"ECHO_PULL_MIN_INTERVAL" envDefault:"0s"`
	// Largest `limit` a pull honours (larger values are clamped), and the most `taskIds` a batch
	// confirm or release accepts (a lease never holds more): a longer list is 400 `VALIDATION_ERROR`
	// with `details {field: taskIds, limit}`.
	PullBatchSize int `env:"ECHO_PULL_BATCH_SIZE" envDefault:"100"`
	// Default lifetime of a server task created without `expires_at` (0 = never expires). Expired
	// tasks are never pulled.
	TaskExpiryTime time.Duration `env:"ECHO_TASK_EXPIRY_TIME" envDefault:"0s"`
	// What the sweeper does with expired, unpulled server tasks: `archive` (sets `archived_at`, keeps
	// the task) or `delete` (soft delete, `deleted_reason: expired`).
	TaskExpiryAction string `env:"ECHO_TASK_EXPIRY_ACTION" envDefault:"archive"`
	// Whether reset and reset-error end leases (`reason: queue-op`) and clear `pulled_at`.
	ResetClearPullStatus bool `env:"ECHO_RESET_CLEAR_PULL_STATUS" envDefault:"true"`
	// Same for queue re-run and single-task re-run.
	RerunClearPullStatus bool `env:"ECHO_RERUN_CLEAR_PULL_STATUS" envDefault:"true"`
	// Default rule for a push over a server edit the client has not pulled: `overwrite` (TaskEcho's
	// behaviour) or `reject` (409). A project's `conflict_policy` and `?conflict=` on the submit
	// override it.
	ConflictPolicy string `env:"ECHO_CONFLICT_POLICY" envDefault:"overwrite"`
	// Interval of the `echo-pull-lease-sweeper` Temporal schedule (created by the worker at start if
	// missing; an existing schedule keeps its interval).
	SweepInterval time.Duration `env:"ECHO_SWEEP_INTERVAL" envDefault:"1m"`
	// How long a reset / reset-error / re-run HTTP call waits for its workflow; after that it answers
	// 202 with `op_id` and `state: running`.
	QueueOpWait time.Duration `env:"ECHO_QUEUE_OP_WAIT" envDefault:"10s" readby:"api"`
	// Window of the sweeper's alert checks.
	AlertWindow time.Duration `env:"ECHO_ALERT_WINDOW" envDefault:"1h"`
	// WARN `alert=pull_success_rate_low` when successful lease endings (push, confirm) over all
	// endings in the window fall below it (0 = off).
	AlertMinSuccessRate float64 `env:"ECHO_ALERT_MIN_SUCCESS_RATE" envDefault:"0.8"`
	// WARN `alert=pull_timeouts_high` when more leases timed out in the window (0 = off).
	AlertMaxTimeouts int `env:"ECHO_ALERT_MAX_TIMEOUTS" envDefault:"100"`
	// WARN `alert=pull_rate_high` when one key pulls more often in a minute (checked on every pull; 0
	// = off).
	AlertMaxPullsPerMinute int `env:"ECHO_ALERT_MAX_PULLS_PER_MINUTE" envDefault:"120"`
	// WARN `alert=queue_operations_high` when more queue operations ran in the window (0 = off).
	AlertMaxQueueOperations int `env:"ECHO_ALERT_MAX_QUEUE_OPERATIONS" envDefault:"60"`
}

// validate names the variable of every invalid value.
func (c *Echo) validate() error {
	var errs []error
	positive := func(name string, ok bool) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: must be positive", name))
		}
	}
	positive("ECHO_PULL_TIMEOUT", c.PullTimeout > 0)
	positive("ECHO_PULL_BATCH_SIZE", c.PullBatchSize > 0)
	positive("ECHO_SWEEP_INTERVAL", c.SweepInterval > 0)
	positive("ECHO_QUEUE_OP_WAIT", c.QueueOpWait > 0)
	positive("ECHO_ALERT_WINDOW", c.AlertWindow > 0)
	for name, n := range map[string]int{
		"ECHO_PULL_RATE_LIMIT_PER_MINUTE": c.PullRateLimitPerMinute, "ECHO_PULL_RATE_LIMIT_PER_HOUR": c.PullRateLimitPerHour,
		"ECHO_PULL_QUOTA": c.PullQuota, "ECHO_ALERT_MAX_TIMEOUTS": c.AlertMaxTimeouts,
		"ECHO_ALERT_MAX_PULLS_PER_MINUTE": c.AlertMaxPullsPerMinute, "ECHO_ALERT_MAX_QUEUE_OPERATIONS": c.AlertMaxQueueOperations,
	} {
		if n < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative (0 disables)", name))
		}
	}
	if c.PullMinInterval < 0 || c.TaskExpiryTime < 0 {
		errs = append(errs, errors.New("ECHO_PULL_MIN_INTERVAL, ECHO_TASK_EXPIRY_TIME: must not be negative"))
	}
	if err := oneOf(c.TaskExpiryAction, "archive", "delete"); err != nil {
		errs = append(errs, fmt.Errorf("ECHO_TASK_EXPIRY_ACTION: %w", err))
	}
	if err := oneOf(c.ConflictPolicy, "overwrite", "reject"); err != nil {
		errs = append(errs, fmt.Errorf("ECHO_CONFLICT_POLICY: %w", err))
	}
	if c.AlertMinSuccessRate < 0 || c.AlertMinSuccessRate > 1 {
		errs = append(errs, errors.New("ECHO_ALERT_MIN_SUCCESS_RATE: must be between 0 and 1"))
	}
	return errors.Join(errs...)
}
