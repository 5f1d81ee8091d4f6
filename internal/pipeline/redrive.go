package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/bulk"
)

// A redrive continues a failed task from its first step that did not succeed, in a new run of the
// task's workflow (same task id, same workflow ID). The succeeded steps' outputs come from their
// task_steps rows, so no vendor call that succeeded is repeated. A task whose failure refunded its
// quota unit is charged one unit again; one that kept its unit is not. Each redrive has an id (from
// the caller's Idempotency-Key, or the bulk operation's id) and is recorded on the task once:
// redrive_count and the redrives history.

// DefaultRedriveWindow is PIPELINE_REDRIVE_WINDOW's default: a task that failed longer ago than
// this is not redriven (410).
const DefaultRedriveWindow = 14 * 24 * time.Hour

// ErrRedriveConflict: only a failed task can be redriven.
var ErrRedriveConflict = errors.New("only a failed task can be redriven")

// ErrRedriveExpired: the task failed before the redrive window.
var ErrRedriveExpired = errors.New("the task failed longer ago than the redrive window")

// Redrive is one entry of a task's redrive history (pipeline_tasks.redrives).
type Redrive struct {
	ID string `bson:"id" json:"id"`
	// RunID is the workflow run that carries the redrive out.
	RunID        string    `bson:"run_id" json:"run_id"`
	At           time.Time `bson:"at" json:"at"`
	FromStep     int       `bson:"from_step" json:"from_step"`
	FromStepName string    `bson:"from_step_name" json:"from_step_name"`
	// PreviousError and FailedAt are the failure the redrive continues from.
	PreviousError string     `bson:"previous_error" json:"previous_error"`
	FailedAt      *time.Time `bson:"failed_at,omitempty" json:"failed_at,omitempty"`
	// Recharged: the failure had refunded the task's unit, and the redrive charged it again.
	Recharged bool `bson:"recharged" json:"recharged"`
	// BulkID is the bulk redrive that asked for it, if any.
	BulkID string `bson:"bulk_id,omitempty" json:"bulk_id,omitempty"`
}

// RedriveOf returns the task's redrive with id, or nil.
func (t *Task) RedriveOf(id string) *Redrive {
	for i := range t.Redrives {
		if t.Redrives[i].ID == id {
			return &t.Redrives[i]
		}
	}
	return nil
}

// CheckRedrive says whether t may be redriven at now: only a failed task, and only within window
// of its failure. The errors wrap ErrRedriveConflict or ErrRedriveExpired.
func CheckRedrive(t *Task, now time.Time, window time.Duration) error {
	switch t.Status {
	case StatusFailed:
	case StatusSuccess:
		return fmt.Errorf("task %s succeeded, there is nothing to redrive: %w", t.ID, ErrRedriveConflict)
	default:
		return fmt.Errorf("task %s is %s: %w", t.ID, t.Status, ErrRedriveConflict)
	}
	failed := t.UpdatedAt
	if t.CompletedAt != nil {
		failed = *t.CompletedAt
	}
	if now.Sub(failed) > window {
		return fmt.Errorf("task %s failed at %s, more than %s ago: %w", t.ID, failed.Format(time.RFC3339), window, ErrRedriveExpired)
	}
	return nil
}

// ResumePoint is where a redrive continues: the first step that did not succeed, and the outputs
// of the steps before it, in order.
func ResumePoint(steps []StepRecord) (from int, outputs []map[string]any) {
	for _, st := range steps {
		if st.Status != StatusSuccess {
			return st.StepIndex, outputs
		}
		outputs = append(outputs, st.Output)
	}
	return len(steps), outputs
}

// RedriveIDForKey derives a redrive id from an Idempotency-Key within a scope (the caller's
// identity) and the task, so a retried request finds the same redrive.
func RedriveIDForKey(scope, taskID, key string) string {
	sum := sha256.Sum256([]byte("pipeline-redrive\x00" + scope + "\x00" + taskID + "\x00" + key))
	return "key:" + hex.EncodeToString(sum[:12])
}

// BulkRedriveID is the redrive id a bulk redrive gives each task it redrives.
func BulkRedriveID(bulkID string) string { return "bulk:" + bulkID }

// RedriveRequest asks the redrive admission (PipelineRedriveTask) to reopen a failed task.
type RedriveRequest struct {
	TaskID    string
	RunID     string
	RedriveID string
	BulkID    string
}

// RedriveResult is a reopened task: the schema snapshot it runs, the step it continues from and
// the outputs of the steps before it.
type RedriveResult struct {
	Pipeline string
	Version  string
	Schema   Schema
	FromStep int
	Outputs  []map[string]any
	// Count is the task's redrive_count with this redrive.
	Count int
}

// RedriveFilter selects failed tasks for a bulk redrive. Empty fields match every task; the times
// bound the failure (completed_at), and Error is a case-insensitive substring of error_reason.
type RedriveFilter struct {
	Pipeline    string     `json:"pipeline,omitempty"`
	Version     string     `json:"version,omitempty"`
	UserID      string     `json:"user_id,omitempty"`
	Provider    string     `json:"provider,omitempty"`
	FailedSince *time.Time `json:"failed_since,omitempty"`
	FailedUntil *time.Time `json:"failed_until,omitempty"`
	Error       string     `json:"error,omitempty"`
}

// Within narrows the filter to failures inside the redrive window at now (older ones would be
// refused) and not after until (a bulk operation fixes the set it works on when it starts).
func (f RedriveFilter) Within(now time.Time, window time.Duration, until time.Time) RedriveFilter {
	if earliest := now.Add(-window); f.FailedSince == nil || f.FailedSince.Before(earliest) {
		f.FailedSince = &earliest
	}
	if f.FailedUntil == nil || f.FailedUntil.After(until) {
		f.FailedUntil = &until
	}
	return f
}

// Outcomes of one task in a bulk redrive.
const (
	OutcomeRedriven = "redriven"          // this bulk operation redrove it (now or on an earlier attempt)
	OutcomeSkipped  = bulk.OutcomeSkipped // refused: no longer failed, out of the window, or no quota left
	OutcomeError    = bulk.OutcomeError   // the redrive could not be asked for (Temporal unavailable, …)
)

// RedriveOutcome is what a bulk redrive did with one task.
type RedriveOutcome struct {
	TaskID  string `json:"task_id"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Result is o's outcome word (bulk.Outcome).
func (o RedriveOutcome) Result() string { return o.Outcome }

// RedriveBatchRequest asks for one batch of a bulk redrive (ID is the operation's): the next Limit
// tasks of Filter after the task id After (every failed task the filter matches, and those this
// bulk operation has redriven already, so a retried batch sees the same tasks). A redrive carries
// nothing besides the filter.
type RedriveBatchRequest = bulk.PageRequest[RedriveFilter, struct{}]

// RedriveBatchResult is one batch's outcomes; Last is the cursor of the next batch, and Done says
// the filter has no task after it.
type RedriveBatchResult = bulk.Page[RedriveOutcome]
