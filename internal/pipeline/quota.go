package pipeline

import (
	"errors"
	"time"
)

// ErrQuotaExhausted: the user has no unit left for the feature (HTTP 402 QUOTA_EXHAUSTED).
var ErrQuotaExhausted = errors.New("quota exhausted")

// LedgerEntry records what happened to the unit a task consumed.
type LedgerEntry struct {
	TaskID     string     `json:"task_id"`
	ConsumedAt time.Time  `json:"consumed_at"`
	Refunded   bool       `json:"refunded"`
	RefundedAt *time.Time `json:"refunded_at,omitempty"`
}

// Quota is a user's balance for one feature. Granted is derived: remaining + consumed − refunded.
type Quota struct {
	UserID    string        `json:"user_id"`
	FeatureID string        `json:"feature_id"`
	Remaining int           `json:"remaining"`
	Granted   int           `json:"granted"`
	Consumed  int           `json:"consumed"`
	Refunded  int           `json:"refunded"`
	Ledger    []LedgerEntry `json:"ledger"`
	UpdatedAt time.Time     `json:"updated_at"`
}
