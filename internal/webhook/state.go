package webhook

import (
	"fmt"
	"time"
)

// Attempt is one try at delivering a row.
type Attempt struct {
	StartedAt time.Time
	EndedAt   time.Time
	Err       string // empty on success
}

// Transition is the write-back after an attempt or a readiness verdict.
type Transition struct {
	Status     string
	RetryCount int
	LastError  string
	// StartAt is set only when the row has none yet (StartAt is written once).
	StartAt *time.Time
	EndAt   time.Time
}

// AfterAttempt applies the row state machine to a row that had retryCount failures and
// hadStart (StartAt already written): success → success with RetryCount 0; failure →
// RetryCount+1 and failed, or error once MaxPushFailures is reached.
func AfterAttempt(retryCount int, hadStart bool, a Attempt) Transition {
	t := Transition{EndAt: a.EndedAt}
	if !hadStart {
		s := a.StartedAt
		t.StartAt = &s
	}
	if a.Err == "" {
		t.Status, t.RetryCount = StatusSuccess, 0
		return t
	}
	t.RetryCount = retryCount + 1
	t.LastError = a.Err
	t.Status = StatusFailed
	if t.RetryCount >= MaxPushFailures {
		t.Status = StatusError
		t.LastError = fmt.Sprintf("%s (gave up after %d failed pushes)", a.Err, t.RetryCount)
	}
	return t
}

// DeadlineExceeded is the transition for a row whose tasks did not finish in time: `error`,
// RetryCount untouched, with the unfinished tasks in LastError.
func DeadlineExceeded(retryCount int, hadStart bool, started, now time.Time, deadline time.Duration, waiting []string) Transition {
	t := Transition{Status: StatusError, RetryCount: retryCount, EndAt: now,
		LastError: fmt.Sprintf("readiness deadline %s exceeded; tasks not finished: %s", deadline, summarize(waiting, 20))}
	if !hadStart {
		t.StartAt = &started
	}
	return t
}

// Fields renders t as result-table cells.
func (t Transition) Fields(f WebhookFieldNames) map[string]any {
	m := map[string]any{
		f.Status:     t.Status,
		f.RetryCount: t.RetryCount,
		f.LastError:  t.LastError,
		f.EndAt:      t.EndAt.UnixMilli(),
	}
	if t.StartAt != nil {
		m[f.StartAt] = t.StartAt.UnixMilli()
	}
	return m
}
