package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/webhook"
)

// The client side of the webhook workflows: every start, signal and query the API, the console,
// the CLI and the sweep activity make, with the workflow IDs and policies they share. A delivery
// workflow's ID is webhook.DeliveryID(table, record_id).

// SweepID is the workflow ID of an operator's sweep started at now by origin ("manual" for the
// API and console, "cli" for the command line).
func SweepID(origin string, now time.Time) string {
	return "webhook-sweep-" + origin + "-" + now.UTC().Format("20060102T150405.000")
}

// CreatorID is the workflow ID of a creator run started at now from the command line.
func CreatorID(app string, now time.Time) string {
	return "webhook-creator-cli-" + app + "-" + now.UTC().Format("20060102T150405")
}

// GroupsWorkflowID is the workflow ID of CreateWebhookResultsForGroups for a parent task.
func GroupsWorkflowID(parentTaskID string) string { return "webhook-groups-" + parentTaskID }

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
	return start(ctx, c, taskQueue, id, WebhookResultWorker, in, explain.Summary("webhook sweep", filterText(in.Filter)),
		explain.Details("One scan of the webhook result table ("+filterText(in.Filter)+"): pushes the rows whose TaskIDs are all "+
			"final and hands each row that waits to its own WebhookDeliveryWorkflow.",
			explain.Link{Name: "Console", Path: "/ui/console/webhook"}))
}

// filterText says which rows a sweep scans.
func filterText(f webhook.RowFilter) string {
	var parts []string
	if f.GroupID != "" {
		parts = append(parts, "group "+f.GroupID)
	}
	if f.Date != "" {
		parts = append(parts, "date "+f.Date)
	}
	if len(parts) == 0 {
		return "every waiting row"
	}
	return strings.Join(parts, ", ")
}

// StartGroups starts CreateWebhookResultsForGroups for in's parent task under GroupsWorkflowID,
// or joins the run creating that parent's rows: a second request while the first runs waits for
// the same result instead of creating the rows twice.
func StartGroups(ctx context.Context, c client.Client, taskQueue string, in webhook.GroupsInput) (client.WorkflowRun, error) {
	return start(ctx, c, taskQueue, GroupsWorkflowID(in.ParentTaskID), CreateWebhookResultsForGroups, in,
		explain.Summary("webhook rows for the groups of parent task "+in.ParentTaskID),
		explain.Details("Creates one webhook result row per group of parent task `"+in.ParentTaskID+"`; each row is then "+
			"delivered by its own WebhookDeliveryWorkflow.", explain.Link{Name: "Console", Path: "/ui/console/webhook"}))
}

// RecoverID is the workflow ID of a recover run: from the caller's Idempotency-Key (keyID is
// the API key that sent it) when there is one, else from the time range, so the same request
// again finds the same run.
func RecoverID(keyID, idempotencyKey string, since, until time.Time) string {
	src := "range\x00" + since.UTC().Format(time.RFC3339Nano) + "\x00" + until.UTC().Format(time.RFC3339Nano)
	if idempotencyKey != "" {
		src = "key\x00" + keyID + "\x00" + idempotencyKey
	}
	sum := sha256.Sum256([]byte(src))
	return "webhook-recover:" + hex.EncodeToString(sum[:12])
}

// RecoverInputFor re-delivers the rows of the configured tables that ended failed or error in
// [since, until), with the configured policy.
func RecoverInputFor(cfg config.Webhook, since, until time.Time) webhook.RecoverInput {
	return webhook.RecoverInput{Target: TargetFrom(cfg), Policy: PolicyFrom(cfg), Since: since.UTC(), Until: until.UTC()}
}

// StartRecover starts WebhookRecoverWorkflow over in under id; created is false when a run of
// that ID exists already, running or closed (it is kept and nothing is started).
func StartRecover(ctx context.Context, c client.Client, taskQueue, id string, in webhook.RecoverInput) (created bool, err error) {
	rng := in.Since.Format(time.RFC3339) + " – " + in.Until.Format(time.RFC3339)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue,
		StaticSummary: explain.Summary("webhook recover", rng),
		StaticDetails: explain.Details("Re-delivers the webhook result rows that ended failed or error with EndAt in "+rng+
			": each is written back to pending and handed to its WebhookDeliveryWorkflow.",
			explain.Link{Name: "Console", Path: "/ui/console/webhook"}),
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true}, WebhookRecoverWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("start %s: %w", id, err)
	}
	return true, nil
}

// RecoverResultOf waits for the recover run id to close and returns its result.
func RecoverResultOf(ctx context.Context, c client.Client, id string) (webhook.RecoverResult, error) {
	var res webhook.RecoverResult
	err := c.GetWorkflow(ctx, id, "").Get(ctx, &res)
	return res, err
}

// StartCreator starts WebhookResultCreator over in under id.
func StartCreator(ctx context.Context, c client.Client, taskQueue, id string, in webhook.CreatorInput) (client.WorkflowRun, error) {
	return start(ctx, c, taskQueue, id, WebhookResultCreator, in, explain.Summary("webhook creator run", id),
		explain.Details("Creates the webhook result rows of the capture tasks that have none yet.",
			explain.Link{Name: "Console", Path: "/ui/console/webhook"}))
}

// start starts wf under id, or joins the run of that ID while it runs; a closed one is started
// again (operators re-run a sweep or a group creation on purpose).
func start(ctx context.Context, c client.Client, taskQueue, id string, wf, in any, summary, details string) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue,
		StaticSummary: summary, StaticDetails: details,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, wf, in)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	return run, nil
}

// QueryDeliveryState asks a running delivery workflow for its state (runID "" is the latest run).
func QueryDeliveryState(ctx context.Context, c client.Client, workflowID, runID string) (DeliveryState, error) {
	var st DeliveryState
	v, err := c.QueryWorkflow(ctx, workflowID, runID, QueryState)
	if err == nil {
		err = v.Get(&st)
	}
	return st, err
}

// DeliveryOutcomeOf waits for a delivery workflow's run to close and returns its outcome. runID ""
// is the row's delivery, followed through continue-as-new to its last run; a given runID is that
// run alone (one that continued as new has no outcome of its own, and following it would wait for
// the row's current run).
func DeliveryOutcomeOf(ctx context.Context, c client.Client, workflowID, runID string) (DeliveryOutcome, error) {
	var out DeliveryOutcome
	err := c.GetWorkflow(ctx, workflowID, runID).GetWithOptions(ctx, &out, client.WorkflowRunGetOptions{DisableFollowingRuns: runID != ""})
	return out, err
}

// DeliveryClient starts and signals the delivery workflows of result rows for the sweep activity
// (it implements activities/webhook's Deliveries; the worker hands it the Temporal client).
type DeliveryClient struct {
	Client client.Client
}

// deliveryOptions are the options of every start of a row's delivery workflow: its ID, and the
// search attributes the console lists deliveries by.
func deliveryOptions(taskQueue, tableID string, row webhook.Row) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:        webhook.DeliveryID(tableID, row.RecordID),
		TaskQueue: taskQueue,
		StaticSummary: explain.Summary("webhook row "+row.RecordID, row.BizType, "group "+row.GroupID,
			fmt.Sprintf("%d TaskIDs", len(row.TaskIDs))),
		StaticDetails: explain.Details(fmt.Sprintf("Delivers result row `%s` (%s, group `%s`): waits until its %d TaskIDs "+
			"(%s) are all success or error, pushes the payload, and writes webhook_status back to the row after each attempt. "+
			"Its current details say which TaskIDs it still waits for.", row.RecordID, row.BizType, row.GroupID,
			len(row.TaskIDs), webhook.FormatTaskIDs(row.TaskIDs)),
			explain.Link{Name: "Console", Path: "/ui/console/webhook"}),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.Kind.ValueSet(webhook.DeliveryKind), searchattr.Status.ValueSet(row.Status),
			searchattr.Key.ValueSet(row.RecordID), searchattr.BizType.ValueSet(row.BizType),
			searchattr.GroupID.ValueSet(row.GroupID)),
	}
}

// Ensure starts in.Row's delivery workflow on taskQueue unless one runs already (that one is kept).
func (d DeliveryClient) Ensure(ctx context.Context, taskQueue, tableID string, in webhook.DeliveryInput) error {
	opts := deliveryOptions(taskQueue, tableID, in.Row)
	opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	_, err := d.Client.ExecuteWorkflow(ctx, opts, WebhookDeliveryWorkflow, in)
	return err
}

// Claim starts in.Row's delivery workflow in claimed mode (in.Claimed), held at most
// webhook.ClaimHold, and returns its run ID;
// ok is false when a delivery of the row is running already (it owns the row).
func (d DeliveryClient) Claim(ctx context.Context, taskQueue, tableID string, in webhook.DeliveryInput) (runID string, ok bool, err error) {
	opts := deliveryOptions(taskQueue, tableID, in.Row)
	opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	// The hold on the row is the run itself: no timer, and a run whose sweep never reports ends
	// after ClaimHold (a row the sweep leaves to it continues as new without this timeout).
	opts.WorkflowRunTimeout = webhook.ClaimHold
	run, err := d.Client.ExecuteWorkflow(ctx, opts, WebhookDeliveryWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return run.GetRunID(), true, nil
}

// ReportOutcome signals the claimed run runID of a row's delivery workflow what the sweep did
// with the row.
func (d DeliveryClient) ReportOutcome(ctx context.Context, tableID, recordID, runID string, o webhook.SweepOutcome) error {
	return d.Client.SignalWorkflow(ctx, webhook.DeliveryID(tableID, recordID), runID, SignalSweepOutcome, o)
}
