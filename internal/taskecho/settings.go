package taskecho

import (
	"fmt"
	"time"
)

// Settings are the task server's configuration items (SettingsFromConfig maps the environment
// onto them; docs/configuration.md lists the variables).
type Settings struct {
	// PullTimeout is how long a lease lasts (pull_timeout, default 1 h).
	PullTimeout time.Duration
	// PullBatchSize caps limit on every pull (pull_batch_size, default 100).
	PullBatchSize int
	// TaskExpiry, when positive, gives server tasks created without expires_at an expiry of
	// created_at + TaskExpiry (task_expiry_time; 0 = never expire).
	TaskExpiry time.Duration
	// TaskExpiryAction says what the sweeper does with expired, unpulled server tasks:
	// "archive" (set archived_at, keep the document) or "delete" (soft delete).
	TaskExpiryAction string
	// ResetClearPullStatus / RerunClearPullStatus: whether reset / re-run release leases.
	ResetClearPullStatus bool
	RerunClearPullStatus bool
	// ConflictPolicy is the default push conflict rule when neither the request nor the project
	// says otherwise: overwrite (TaskEcho's behaviour) or reject.
	ConflictPolicy string
	// ClaimRounds bounds the find+claim rounds of one pull call.
	ClaimRounds int
}

// DefaultSettings are the defaults of the configuration.
func DefaultSettings() Settings {
	return Settings{
		PullTimeout:          time.Hour,
		PullBatchSize:        100,
		TaskExpiryAction:     "archive",
		ResetClearPullStatus: true,
		RerunClearPullStatus: true,
		ConflictPolicy:       ConflictOverwrite,
		ClaimRounds:          6,
	}
}

// Validate fails loudly on settings that would make pulls misbehave.
func (s Settings) Validate() error {
	switch {
	case s.PullTimeout <= 0:
		return fmt.Errorf("echo settings: pull timeout must be positive, got %s", s.PullTimeout)
	case s.PullBatchSize < 1:
		return fmt.Errorf("echo settings: pull batch size must be at least 1, got %d", s.PullBatchSize)
	case s.TaskExpiryAction != "archive" && s.TaskExpiryAction != "delete":
		return fmt.Errorf("echo settings: task expiry action must be archive or delete, got %q", s.TaskExpiryAction)
	case s.ConflictPolicy != ConflictOverwrite && s.ConflictPolicy != ConflictReject:
		return fmt.Errorf("echo settings: conflict policy must be overwrite or reject, got %q", s.ConflictPolicy)
	case s.ClaimRounds < 1:
		return fmt.Errorf("echo settings: claim rounds must be at least 1, got %d", s.ClaimRounds)
	}
	return nil
}

// Actor is who performs an operation: the API key's name (recorded as pulled_by / released_by)
// and its id for the audit log.
type Actor struct {
	Name  string
	KeyID string
}
