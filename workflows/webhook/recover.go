package webhook

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/webhook"
)

var recoverOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Minute,
	HeartbeatTimeout:    time.Minute,
	RetryPolicy:         scanRetry,
}

// WebhookRecoverWorkflow re-delivers the result rows that ended failed or error with EndAt in
// [in.Since, in.Until) (docs/operations.md "Redrive"): its one activity writes each such row back to pending
// and ensures the row's delivery workflow, which pushes it again. Its ID comes from the
// operator's Idempotency-Key (or the time range), so a repeated request finds this run.
func WebhookRecoverWorkflow(ctx workflow.Context, in webhook.RecoverInput) (webhook.RecoverResult, error) {
	if in.Since.IsZero() || !in.Until.After(in.Since) {
		return webhook.RecoverResult{}, temporal.NewNonRetryableApplicationError("recover needs since before until", "BadInput", nil)
	}
	var a *webhookact.Activities
	return runOne[webhook.RecoverResult](ctx, recoverOptions, a.WebhookRecoverRows, in)
}

// runOne runs the one activity of a workflow that only checks its input and hands it on, under
// opts, and returns the activity's result.
func runOne[R any](ctx workflow.Context, opts workflow.ActivityOptions, activity, in any) (R, error) {
	var res R
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activity, in).Get(ctx, &res)
	return res, err
}
