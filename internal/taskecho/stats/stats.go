// Package stats reads what the task server recorded and reports on it: a project's pull figures
// (GET …/tasks/pull/stats and …/tasks/pull/pending), the execution statistics of TaskEcho's /stats routes, the audit log, and
// the alert rules the PullLeaseSweeper evaluates over it. It only reads; the rows it reads are
// written by internal/taskecho as part of each operation.
package stats

import (
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

// Reader runs the reports over one database's echo collections.
type Reader struct {
	tasks      *mongo.Collection
	audit      *mongo.Collection
	executions *mongo.Collection
	now        func() time.Time
	log        *slog.Logger
}

// New builds a reader over db. now is the task server's clock (Server.Now), so that "the last
// window" and "pulled more than timeout ago" mean the same instant as the service's leases; log
// may be nil (slog.Default).
func New(db *mongo.Database, now func() time.Time, log *slog.Logger) *Reader {
	if log == nil {
		log = slog.Default()
	}
	return &Reader{tasks: db.Collection(taskechodb.CollTasks), audit: db.Collection(taskechodb.CollAudit),
		executions: db.Collection(taskechodb.CollExecutions), now: now, log: log.With("subsystem", "taskecho")}
}

func wrap(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }
