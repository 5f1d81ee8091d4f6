// Package taskecho holds the task server's activities: the steps of the PullLeaseSweeper
// schedule and of queue operations, as methods over the domain's parts.
package taskecho

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/taskloom/taskloom/internal/taskecho/alert"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// Leases is what the sweeper's activities ask of the task server; *taskecho.Leases implements it.
// The activities hold interfaces so that this package, which workflows/taskecho imports for the
// activities' method values, links no database client.
type Leases interface {
	CountOverdueLeases(ctx context.Context) (int, error)
	ReleaseExpiredLeases(ctx context.Context, batch int) (int, error)
	ExpireTasks(ctx context.Context, batch int) (int, error)
}

// QueueOps is what the queue operation's activities ask of the task server; *taskecho.QueueOps
// implements it.
type QueueOps interface {
	ApplyQueueOpBatch(ctx context.Context, op queueop.Op, afterID string, batch int) (int, string, error)
	FinishQueueOp(ctx context.Context, op queueop.Op, count int) error
}

// Alerter evaluates the alert rules over the audit log; *stats.Reader (internal/taskecho/stats)
// implements it.
type Alerter interface {
	CheckAlerts(ctx context.Context, th alert.Thresholds) (*alert.Report, error)
}

// Activities are the task server's activities; workflows/taskecho.Register registers them.
type Activities struct {
	Leases   Leases
	QueueOps QueueOps
	Alerter  Alerter
	Alerts   alert.Thresholds
}

// SweepResult is what one sweep did.
type SweepResult struct {
	Overdue       int           `json:"overdue"`
	Released      int           `json:"released"`
	Expired       int           `json:"expired"`
	AlertBreaches []string      `json:"alert_breaches"`
	Alerts        *alert.Report `json:"alerts,omitempty"`
}

// Sweep steps: each activity loops over steps of sweepBatchSize until a step finds nothing, for
// at most maxSweepSteps steps; the next scheduled run continues.
const (
	sweepBatchSize = 500
	maxSweepSteps  = 200
)

// TaskEchoReleaseExpiredLeases releases every lease past pull_timeout in batches, heartbeating between
// them. Idempotent: each batch only touches leases still expired (each release is guarded by the
// task's revision it read), so a retry after a crash just continues.
func (a *Activities) TaskEchoReleaseExpiredLeases(ctx context.Context) (SweepResult, error) {
	var r SweepResult
	overdue, err := a.Leases.CountOverdueLeases(ctx)
	if err != nil {
		return r, err
	}
	r.Overdue = overdue
	for range maxSweepSteps {
		n, err := a.Leases.ReleaseExpiredLeases(ctx, sweepBatchSize)
		if err != nil {
			return r, fmt.Errorf("release expired leases: %w", err)
		}
		r.Released += n
		activity.RecordHeartbeat(ctx, r.Released)
		if n == 0 {
			break
		}
	}
	return r, nil
}

// TaskEchoExpireTasks archives or deletes tasks past expires_at (task_expiry_time). Idempotent: it
// selects only tasks not yet archived/deleted.
func (a *Activities) TaskEchoExpireTasks(ctx context.Context) (int, error) {
	total := 0
	for range maxSweepSteps {
		n, err := a.Leases.ExpireTasks(ctx, sweepBatchSize)
		if err != nil {
			return total, fmt.Errorf("expire tasks: %w", err)
		}
		total += n
		activity.RecordHeartbeat(ctx, total)
		if n == 0 {
			break
		}
	}
	return total, nil
}

// TaskEchoCheckAlerts evaluates the alert thresholds (WARN logs on breach); a read, safe to
// repeat.
func (a *Activities) TaskEchoCheckAlerts(ctx context.Context) (SweepResult, error) {
	var r SweepResult
	rep, err := a.Alerter.CheckAlerts(ctx, a.Alerts)
	if err != nil {
		return r, err
	}
	r.Alerts, r.AlertBreaches = rep, rep.Breaches
	return r, nil
}

// QueueOpRun is the input of TaskEchoRunQueueOp: the operation and where an earlier call of the
// same run stopped (AfterID, the tasks changed and batches done so far).
type QueueOpRun struct {
	Op      queueop.Op `json:"op"`
	AfterID string     `json:"after_id"`
	Changed int        `json:"changed"`
	Batches int        `json:"batches"`
}

// QueueOpRunResult is the progress after a TaskEchoRunQueueOp call: Finished when the queue was
// exhausted and the operation stamped and audited, else NextID is where the next call starts.
type QueueOpRunResult struct {
	Changed  int    `json:"changed"`
	Batches  int    `json:"batches"`
	NextID   string `json:"next_id"`
	Finished bool   `json:"finished"`
}

// QueueOpBatchesPerCall bounds one TaskEchoRunQueueOp call (10,000 tasks at queueop.BatchSize);
// a longer queue takes one call per this many batches.
const QueueOpBatchesPerCall = 20

// TaskEchoRunQueueOp applies a queue operation batch after batch and, when the queue is exhausted
// within the call, finishes it (FinishQueueOp), so that an operation on up to
// QueueOpBatchesPerCall batches is one activity. It heartbeats its progress after each batch; a
// retry resumes from the last heartbeat. Idempotent: every batch is (a task already reset is
// rewritten to the same state or matches nothing, and the changed count is read back over the
// cursor range), the cursor only moves forward, and the finish sets fixed values (a retry after
// it writes one more audit row at worst).
func (a *Activities) TaskEchoRunQueueOp(ctx context.Context, in QueueOpRun) (QueueOpRunResult, error) {
	r := QueueOpRunResult{Changed: in.Changed, Batches: in.Batches, NextID: in.AfterID}
	if activity.HasHeartbeatDetails(ctx) {
		var saved QueueOpRunResult
		if err := activity.GetHeartbeatDetails(ctx, &saved); err == nil {
			r = saved
		}
	}
	for range QueueOpBatchesPerCall {
		n, next, err := a.QueueOps.ApplyQueueOpBatch(ctx, in.Op, r.NextID, queueop.BatchSize)
		if err != nil {
			return r, fmt.Errorf("%s %s/%s: %w", in.Op.Operation, in.Op.ProjectID, in.Op.QueueID, err)
		}
		r.Changed += n
		r.Batches++
		if next == "" {
			if err := a.QueueOps.FinishQueueOp(ctx, in.Op, r.Changed); err != nil {
				return r, err
			}
			r.Finished = true
			return r, nil
		}
		r.NextID = next
		activity.RecordHeartbeat(ctx, r)
	}
	return r, nil
}
