package entry

import (
	"time"

	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// Bulk operator operations on suspended tasks (docs/operations.md "Redrive"): resume or drop every
// suspended task a BulkFilter selects, each through the single-task path (Tasks.Resume/Drop).
const (
	BulkResume = "resume"
	BulkDrop   = "drop"
)

// KindBulk is the TaskloomKind search attribute value of bulk resume/drop workflows.
const KindBulk = searchattr.KindEntryBulk

// Bulk outcomes of one task.
const (
	OutcomeResumed = "resumed"
	OutcomeDropped = "dropped"
	// OutcomeSkipped: the task was no longer suspended when its turn came (resumed or dropped
	// already, e.g. by an earlier attempt of the same batch).
	OutcomeSkipped = bulk.OutcomeSkipped
	OutcomeError   = bulk.OutcomeError
)

// BulkFilter selects suspended tasks by their workflow_runs document. Empty fields match all.
type BulkFilter struct {
	// WorkflowID is the pipeline (the apply request's workflowId) the task runs.
	WorkflowID     string     `json:"workflowId,omitempty"`
	Channel        string     `json:"channel,omitempty"`
	ChatID         string     `json:"chatId,omitempty"`
	SuspendedSince *time.Time `json:"suspendedSince,omitempty"`
	SuspendedUntil *time.Time `json:"suspendedUntil,omitempty"`
	// Reason matches a substring of the suspended reason, case-insensitively.
	Reason string `json:"reason,omitempty"`
}

// Until bounds f's SuspendedUntil by now: an operation does not pick up tasks that suspend
// after it started.
func (f BulkFilter) Until(now time.Time) BulkFilter {
	if f.SuspendedUntil == nil || f.SuspendedUntil.After(now) {
		f.SuspendedUntil = &now
	}
	return f
}

// BulkOutcome is what a bulk operation did to one task.
type BulkOutcome struct {
	TaskID  string `json:"taskId"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Result is o's outcome word (bulk.Outcome).
func (o BulkOutcome) Result() string { return o.Outcome }

// BulkBatchRequest asks EntryBulkBatch for the next page: up to Limit suspended tasks of Filter
// with a task id after After, each resumed or dropped (Op) with Params, the signal's payload.
type BulkBatchRequest = bulk.PageRequest[BulkFilter, SignalPayload]

// BulkBatchResult is one page's outcomes.
type BulkBatchResult = bulk.Page[BulkOutcome]
