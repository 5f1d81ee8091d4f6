package taskecho

import (
	"context"
	"time"
)

// touch bumps last_task_at of the project (and queue); a lost touch only delays a UI refresh, so
// errors are logged.
func (c *core) touch(ctx context.Context, projectID string, queueID *string, now time.Time) {
	set := Fields{"last_task_at": now, "updated_at": now}
	if _, err := c.store.UpdateProject(ctx, projectID, set); err != nil {
		c.log.WarnContext(ctx, "echo touch project failed", "project_id", projectID, "err", err)
	}
	if queueID != nil {
		if err := c.store.UpdateQueue(ctx, projectID, *queueID, set); err != nil {
			c.log.WarnContext(ctx, "echo touch queue failed", "queue_id", *queueID, "err", err)
		}
	}
}
