package taskecho

import (
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/taskecho/alert"
)

// SettingsFromConfig maps the env configuration onto the service settings.
func SettingsFromConfig(c config.Echo) Settings {
	s := DefaultSettings()
	s.PullTimeout = c.PullTimeout
	s.PullBatchSize = c.PullBatchSize
	s.TaskExpiry = c.TaskExpiryTime
	s.TaskExpiryAction = c.TaskExpiryAction
	s.ResetClearPullStatus = c.ResetClearPullStatus
	s.RerunClearPullStatus = c.RerunClearPullStatus
	s.ConflictPolicy = c.ConflictPolicy
	return s
}

// AlertsFromConfig maps the env configuration onto the alert thresholds.
func AlertsFromConfig(c config.Echo) alert.Thresholds {
	return alert.Thresholds{
		Window: c.AlertWindow, MinSuccessRate: c.AlertMinSuccessRate, MaxTimeouts: c.AlertMaxTimeouts,
		MaxPullsPerKeyPerMinute: c.AlertMaxPullsPerMinute, MaxQueueOps: c.AlertMaxQueueOperations,
	}
}
