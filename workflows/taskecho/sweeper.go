// Package taskecho holds the TaskEcho subsystem's workflows: the PullLeaseSweeper (run by a
// schedule every minute) and QueueOperationWorkflow (one queue reset / reset-error / re-run).
package taskecho

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
)

// acts names the activities the workflows schedule: a nil receiver's method values only name the
// activity type (its method name, TaskEchoRunQueueOp, …) and type its arguments.
var acts *taskechoact.Activities

// Kind is the TaskloomKind search attribute value of echo workflows.
const Kind = "echo"

// SweeperScheduleID is the schedule that runs PullLeaseSweeperWorkflow.
const SweeperScheduleID = "echo-pull-lease-sweeper"

// sweepActivityTimeout bounds one sweep step; steps heartbeat, so a dead worker is noticed
// after sweepHeartbeat.
const (
	sweepActivityTimeout = 5 * time.Minute
	sweepHeartbeat       = time.Minute
)

// PullLeaseSweeperWorkflow releases leases past pull_timeout (released_by "timeout" in
// pull_history), archives or deletes tasks past expires_at and evaluates
// the alert thresholds. Each step is an idempotent activity, so an overlapping or retried run is
// harmless (the schedule skips overlaps anyway).
func PullLeaseSweeperWorkflow(ctx workflow.Context) (taskechoact.SweepResult, error) {
	opts := func(summary string) workflow.ActivityOptions {
		return workflow.ActivityOptions{StartToCloseTimeout: sweepActivityTimeout, HeartbeatTimeout: sweepHeartbeat,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}, Summary: summary}
	}
	var out, alerts taskechoact.SweepResult
	step := func(summary string) workflow.Context {
		workflow.SetCurrentDetails(ctx, summary)
		return workflow.WithActivityOptions(ctx, opts(summary))
	}
	if err := workflow.ExecuteActivity(step("release leases past pull_timeout"), acts.TaskEchoReleaseExpiredLeases).Get(ctx, &out); err != nil {
		return out, err
	}
	if err := workflow.ExecuteActivity(step("expire tasks past expires_at"), acts.TaskEchoExpireTasks).Get(ctx, &out.Expired); err != nil {
		return out, err
	}
	if err := workflow.ExecuteActivity(step("evaluate the alert thresholds"), acts.TaskEchoCheckAlerts).Get(ctx, &alerts); err != nil {
		return out, err
	}
	out.Alerts, out.AlertBreaches = alerts.Alerts, alerts.AlertBreaches
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("done: %d leases released, %d tasks expired, %d alert breaches",
		out.Released, out.Expired, len(out.AlertBreaches)))
	workflow.GetLogger(ctx).Info("echo sweep done", "released", out.Released, "expired", out.Expired,
		"overdue", out.Overdue, "breaches", out.AlertBreaches)
	return out, nil
}
