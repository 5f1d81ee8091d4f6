package config

import (
	"errors"
	"fmt"
	"time"
)

// Echo configures the TaskEcho-compatible task server; README's
// "Echo / TaskEcho" configuration table describes every variable.
type Echo struct {
	// PullTimeout is pull_timeout: how long a pulled task stays leased to its puller.
	PullTimeout time.Duration `env:"ECHO_PULL_TIMEOUT" envDefault:"1h"`
	// PullRateLimitPerMinute / PerHour are pull_rate_limit: pull calls per API key (0 = off).
	PullRateLimitPerMinute int `env:"ECHO_PULL_RATE_LIMIT_PER_MINUTE" envDefault:"60"`
	PullRateLimitPerHour   int `env:"ECHO_PULL_RATE_LIMIT_PER_HOUR" envDefault:"1000"`
	// PullQuota is pull_quota: tasks one API key may pull per UTC day (0 = unlimited).
	PullQuota int `env:"ECHO_PULL_QUOTA" envDefault:"10000"`
	// PullMinInterval is the minimum time between two pulls of one API key (0 = none).
	PullMinInterval time.Duration `env:"ECHO_PULL_MIN_INTERVAL" envDefault:"0s"`
	// PullBatchSize is pull_batch_size: the largest limit a pull accepts.
	PullBatchSize int `env:"ECHO_PULL_BATCH_SIZE" envDefault:"100"`
	// TaskExpiryTime is task_expiry_time: default lifetime of a server task (0 = never expires).
	TaskExpiryTime time.Duration `env:"ECHO_TASK_EXPIRY_TIME" envDefault:"0s"`
	// TaskExpiryAction is what happens to expired tasks: archive or delete (soft).
	TaskExpiryAction string `env:"ECHO_TASK_EXPIRY_ACTION" envDefault:"archive"`
	// ResetClearPullStatus / RerunClearPullStatus: reset_clear_pull_status / rerun_clear_pull_status.
	ResetClearPullStatus bool `env:"ECHO_RESET_CLEAR_PULL_STATUS" envDefault:"true"`
	RerunClearPullStatus bool `env:"ECHO_RERUN_CLEAR_PULL_STATUS" envDefault:"true"`
	// ConflictPolicy is the default push conflict rule: overwrite or reject.
	ConflictPolicy string `env:"ECHO_CONFLICT_POLICY" envDefault:"overwrite"`
	// SweepInterval is how often the PullLeaseSweeper schedule runs.
	SweepInterval time.Duration `env:"ECHO_SWEEP_INTERVAL" envDefault:"1m"`
	// QueueOpWait is how long a queue-operation HTTP call waits for its workflow before
	// answering 202 with the operation id.
	QueueOpWait time.Duration `env:"ECHO_QUEUE_OP_WAIT" envDefault:"10s"`
	// Alert thresholds (seed "告警规则"); breaches are WARN logs with alert=<name>.
	AlertWindow             time.Duration `env:"ECHO_ALERT_WINDOW" envDefault:"1h"`
	AlertMinSuccessRate     float64       `env:"ECHO_ALERT_MIN_SUCCESS_RATE" envDefault:"0.8"`
	AlertMaxTimeouts        int           `env:"ECHO_ALERT_MAX_TIMEOUTS" envDefault:"100"`
	AlertMaxPullsPerMinute  int           `env:"ECHO_ALERT_MAX_PULLS_PER_MINUTE" envDefault:"120"`
	AlertMaxQueueOperations int           `env:"ECHO_ALERT_MAX_QUEUE_OPERATIONS" envDefault:"60"`
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
