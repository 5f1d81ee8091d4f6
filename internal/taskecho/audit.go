package taskecho

import (
	"context"
)

// recordAudit appends one audit_log row. The operation it describes has already happened, so a
// failed audit write is logged at error level rather than turned into a failed request.
func (c *core) recordAudit(ctx context.Context, e AuditEntry) {
	if e.At.IsZero() {
		e.At = c.now()
	}
	if e.TaskIDs == nil {
		e.TaskIDs = []string{}
	}
	if err := c.store.InsertAudit(ctx, e); err != nil {
		c.log.ErrorContext(ctx, "echo audit write failed", "action", e.Action, "project_id", e.ProjectID, "err", err)
	}
}
