package webhook

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/searchattr"
	wf "github.com/taskloom/taskloom/workflows/webhook"
)

// SweepRows is one WebhookResultWorker scan: it finds rows with Status pending or failed
// (error rows are skipped by the search) and makes sure each has its delivery workflow.
// Starting with the USE_EXISTING conflict policy makes this idempotent: a row whose workflow
// is already running (waiting on tasks, or between retries) keeps that workflow.
func (a *Activities) SweepRows(ctx context.Context, in wf.SweepInput) (wf.SweepResult, error) {
	t, err := a.tables(ctx, in.Target.URLs)
	if err != nil {
		return wf.SweepResult{}, err
	}
	rows, err := t.CandidateRows(ctx, in.Filter)
	if err != nil {
		return wf.SweepResult{}, nonRetryableFilter(err)
	}
	res := wf.SweepResult{Candidates: len(rows)}
	queue := activity.GetInfo(ctx).TaskQueue
	now := time.Now()
	for i, row := range rows {
		opts := client.StartWorkflowOptions{
			ID:                       wf.DeliveryID(t.Webhook.TableID, row.RecordID),
			TaskQueue:                queue,
			WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				searchattr.Kind.ValueSet(wf.DeliveryKind), searchattr.Status.ValueSet(row.Status),
				searchattr.Key.ValueSet(row.RecordID), searchattr.BizType.ValueSet(row.BizType),
				searchattr.GroupID.ValueSet(row.GroupID)),
		}
		run, err := a.Temporal.ExecuteWorkflow(ctx, opts, wf.DeliveryWorkflowName, wf.DeliveryInput{
			Target: in.Target, Row: row, Policy: in.Policy, Since: now,
		})
		if err != nil {
			return res, fmt.Errorf("ensure delivery workflow for row %s: %w", row.RecordID, err)
		}
		if run.GetID() != "" {
			res.Ensured++
		}
		if i%50 == 0 {
			activity.RecordHeartbeat(ctx, i)
		}
		a.logger(row, row.Status).Debug("webhook delivery ensured", "workflow_id", opts.ID)
	}
	a.Log.Info("webhook sweep", "candidates", res.Candidates, "group_id", in.Filter.GroupID, "date", in.Filter.Date)
	return res, nil
}
