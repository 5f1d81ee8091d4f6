// Package queueop is what an echo queue operation is — a reset, reset-error or re-run over the
// tasks of one queue — apart from the store that applies it: the HTTP handlers build an Op,
// QueueOperationWorkflow and its activities carry it, echo.Service applies it. It opens no
// connection, so workflows/taskecho can import it.
package queueop

import "time"

// Queue operations (also the values of queues.last_operation).
const (
	Reset      = "reset"
	ResetError = "reset-error"
	ReRun      = "re-run"
)

// Op is one queue operation over the tasks of a queue. It is applied in batches by a Temporal
// workflow so that a crash mid-way finishes the job; every batch is idempotent (a task already
// reset matches nothing or is rewritten to the same state).
type Op struct {
	OpID      string    `json:"op_id"`
	ProjectID string    `json:"project_id"`
	QueueID   string    `json:"queue_id"`
	Operation string    `json:"operation"`
	Actor     string    `json:"actor"`
	At        time.Time `json:"at"`
}

// Valid reports whether operation is one of the three queue operations.
func Valid(operation string) bool {
	return operation == Reset || operation == ResetError || operation == ReRun
}

// BatchSize is how many tasks one activity call resets.
const BatchSize = 500
