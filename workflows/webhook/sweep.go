package webhook

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/webhook"
)

// scanRetry is the retry policy of the activities that scan the result table (the sweep and a
// recovery): a missing Feishu app, a bad table URL or a bad filter does not heal by retrying.
var scanRetry = &temporal.RetryPolicy{InitialInterval: 2 * time.Second, MaximumAttempts: 3,
	NonRetryableErrorTypes: []string{"FeishuNotConfigured", "BadTableURL", "InvalidFilter"}}

var sweepOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Minute,
	HeartbeatTimeout:    time.Minute,
	RetryPolicy:         scanRetry,
}

// WebhookResultWorker is one scan of the result table (run by the sweep schedule, or once by
// `starter webhook-worker --group-id/--date`): it escalates exhausted failed tasks in the task
// table, then ensures a WebhookDeliveryWorkflow for every pending/failed row.
func WebhookResultWorker(ctx workflow.Context, in webhook.SweepInput) (webhook.SweepResult, error) {
	ctx = workflow.WithActivityOptions(ctx, sweepOptions)
	var a *webhookact.Activities
	var res webhook.SweepResult
	if err := workflow.ExecuteActivity(ctx, a.WebhookEscalateFailedTasks, in.Target.URLs).Get(ctx, &res.Escalated); err != nil {
		workflow.GetLogger(ctx).Warn("webhook: escalating failed tasks failed", "err", err)
	}
	var scan webhook.SweepResult
	if err := workflow.ExecuteActivity(ctx, a.WebhookSweepRows, in).Get(ctx, &scan); err != nil {
		return res, err
	}
	res.Candidates, res.Ensured, res.Delivered = scan.Candidates, scan.Ensured, scan.Delivered
	return res, nil
}

var creatorOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{"FeishuNotConfigured", "BadTableURL", "InvalidFilter", "ParentTaskNotFound"}},
}

// WebhookResultCreator is one creator run for an app: video_screen_capture rows for finished
// 视频录屏采集 tasks, and with EnableSingleURLCapture the single_url_capture aggregation.
func WebhookResultCreator(ctx workflow.Context, in webhook.CreatorInput) (CreatorResult, error) {
	ctx = workflow.WithActivityOptions(ctx, creatorOptions)
	var a *webhookact.Activities
	var res CreatorResult
	if err := workflow.ExecuteActivity(ctx, a.WebhookCreateVideoRows, in).Get(ctx, &res.Video); err != nil {
		return res, err
	}
	if in.EnableSingleURLCapture {
		if err := workflow.ExecuteActivity(ctx, a.WebhookCreateSingleURLRows, in).Get(ctx, &res.SingleURL); err != nil {
			return res, err
		}
	}
	return res, nil
}

// CreateWebhookResultsForGroups creates the piracy_general_search rows of a finished parent
// task (ID webhook-groups-{parent}, so a repeated call finds the same execution).
func CreateWebhookResultsForGroups(ctx workflow.Context, in webhook.GroupsInput) (webhook.CreateResult, error) {
	if in.ParentTaskID == "" {
		return webhook.CreateResult{}, temporal.NewNonRetryableApplicationError("parent_task_id is required", "BadInput", nil)
	}
	var a *webhookact.Activities
	return runOne[webhook.CreateResult](ctx, creatorOptions, a.WebhookCreateGroupRows, in)
}
