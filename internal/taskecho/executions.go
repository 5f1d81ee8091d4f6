package taskecho

import (
	"context"
	"time"
)

// Execution is one row of the executions collection: one task execution, a status change from
// pending to done or error through a push or PATCH /tasks/status (TaskEcho's definition). The
// statistics endpoints aggregate these rows on read (internal/taskecho/stats), so no breakdown
// can be lost the way TaskEcho's mixed-path counters were.
type Execution struct {
	At          time.Time `bson:"at"`
	Date        string    `bson:"date"` // YYYY-MM-DD, UTC
	Hour        int       `bson:"hour"`
	ProjectID   string    `bson:"project_id"`
	ProjectName string    `bson:"project_name"`
	QueueID     string    `bson:"queue_id"`
	TaskID      string    `bson:"task_id"`
	Result      string    `bson:"result"` // success | failure
	ErrorType   string    `bson:"error_type,omitempty"`
	DurationMS  *int64    `bson:"duration_ms"` // since the task last became pending
	Hostname    string    `bson:"hostname"`
	APIKeyName  string    `bson:"api_key_name"`
}

// isExecution reports whether a status change counts as an execution.
func isExecution(from, to string) bool {
	return from == StatusPending && (to == StatusDone || to == StatusError)
}

// recordExecution writes one execution row; like the audit log, a failed write is logged.
func (c *core) recordExecution(ctx context.Context, t *Task, to, projectName, hostname, keyName string, now time.Time) {
	e := Execution{At: now, Date: now.Format("2006-01-02"), Hour: now.Hour(), ProjectID: t.ProjectID, ProjectName: projectName,
		QueueID: deref(t.QueueID), TaskID: t.TaskID, Result: "success", Hostname: hostname, APIKeyName: keyName}
	if to == StatusError {
		e.Result, e.ErrorType = "failure", "other"
	}
	if t.PendingSince != nil {
		d := now.Sub(*t.PendingSince).Milliseconds()
		e.DurationMS = &d
	}
	if err := c.store.InsertExecution(ctx, e); err != nil {
		c.log.ErrorContext(ctx, "echo execution stats write failed", "project_id", t.ProjectID, "task_id", t.TaskID, "err", err)
	}
}
