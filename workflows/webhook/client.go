package webhook

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/webhook"
)

// The client side of the webhook contract: how the API, the console and the CLI start the
// operator-triggered runs, so each caller starts them with the same IDs and policies.

// SweepID is the workflow ID of an operator's sweep started at now by origin ("manual" for the
// API and console, "cli" for the command line).
func SweepID(origin string, now time.Time) string {
	return "webhook-sweep-" + origin + "-" + now.UTC().Format("20060102T150405.000")
}

// CreatorID is the workflow ID of a creator run started at now from the command line.
func CreatorID(app string, now time.Time) string {
	return "webhook-creator-cli-" + app + "-" + now.UTC().Format("20060102T150405")
}

// SweepInputFor is a sweep of the rows f selects, with the configured tables and policy.
func SweepInputFor(cfg config.Webhook, f webhook.RowFilter) webhook.SweepInput {
	return webhook.SweepInput{Target: TargetFrom(cfg), Filter: f, Policy: PolicyFrom(cfg)}
}

// GroupsInputFor creates the rows of every group of parentTaskID in the configured tables.
func GroupsInputFor(cfg config.Webhook, parentTaskID string) webhook.GroupsInput {
	return webhook.GroupsInput{URLs: TargetFrom(cfg).URLs, ParentTaskID: parentTaskID}
}

// StartSweep starts WebhookResultWorker over in under id.
func StartSweep(ctx context.Context, c client.Client, taskQueue, id string, in webhook.SweepInput) (client.WorkflowRun, error) {
	return start(ctx, c, taskQueue, id, WebhookResultWorker, in)
}

// StartGroups starts CreateWebhookResultsForGroups for in's parent task under GroupsWorkflowID,
// or joins the run creating that parent's rows: a second request while the first runs waits for
// the same result instead of creating the rows twice.
func StartGroups(ctx context.Context, c client.Client, taskQueue string, in webhook.GroupsInput) (client.WorkflowRun, error) {
	return start(ctx, c, taskQueue, GroupsWorkflowID(in.ParentTaskID), CreateWebhookResultsForGroups, in)
}

// StartCreator starts WebhookResultCreator over in under id.
func StartCreator(ctx context.Context, c client.Client, taskQueue, id string, in webhook.CreatorInput) (client.WorkflowRun, error) {
	return start(ctx, c, taskQueue, id, WebhookResultCreator, in)
}

// start starts wf under id, or joins the run of that ID while it runs; a closed one is started
// again (operators re-run a sweep or a group creation on purpose).
func start(ctx context.Context, c client.Client, taskQueue, id string, wf, in any) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, wf, in)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	return run, nil
}
