package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// PipelineRedriveTask is the first thing a redrive run of PipelineWorkflow does: check that the
// task may be redriven, charge its unit again when its failure refunded it, reopen the task with
// the redrive recorded, make its unfinished steps pending, and return where to continue with the
// outputs of the steps before. Refusals (pipeline.Refusals: ErrRedriveConflict, ErrRedriveExpired,
// ErrQuotaExhausted, ErrRedriveRepeated) leave nothing behind.
//
// Idempotent, for activity retries: the task's redrive history decides (this run's entry there
// means "carry on"); the charge is guarded by the quota's open_tasks (a retried charge takes
// nothing); the reopening is one update guarded by status failed and the redrive id; resetting
// steps never touches a succeeded one.
func (a *Activities) PipelineRedriveTask(ctx context.Context, req pipeline.RedriveRequest) (*pipeline.RedriveResult, error) {
	task, err := a.Store.GetTask(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	rec, err := a.Store.GetSchema(ctx, task.Pipeline, task.Version)
	if err != nil {
		return nil, err
	}
	rows, err := a.Store.ListSteps(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	steps := pipeline.PlannedSteps(task, rows)
	if earlier := task.RedriveOf(req.RedriveID); earlier != nil {
		if earlier.RunID != req.RunID {
			return nil, pipeline.RefuseAs(pipeline.ErrRedriveRepeated, fmt.Sprintf("task %s was redriven by this request already", task.ID), *earlier)
		}
		return a.resume(ctx, task.ID, rec, earlier.FromStep, steps, task.RedriveCount)
	}
	if err := pipeline.CheckRedrive(task, time.Now(), a.RedriveWindow); err != nil {
		return nil, pipeline.Refuse(err)
	}
	from, _ := pipeline.ResumePoint(steps)
	if from >= len(rec.Schema.Steps) {
		return nil, pipeline.RefuseAs(pipeline.ErrRedriveConflict, fmt.Sprintf("task %s has no unfinished step", task.ID))
	}
	if task.Refunded {
		if err := a.Store.ConsumeQuota(ctx, task.UserID, task.FeatureID, task.ID); errors.Is(err, pipeline.ErrQuotaExhausted) {
			return nil, pipeline.Refuse(err)
		} else if err != nil {
			return nil, err
		}
	}
	entry := pipeline.Redrive{ID: req.RedriveID, RunID: req.RunID, At: time.Now().UTC().Truncate(time.Millisecond), FromStep: from,
		FromStepName: rec.Schema.Steps[from].Name, PreviousError: task.ErrorReason, FailedAt: task.CompletedAt,
		Recharged: task.Refunded, BulkID: req.BulkID}
	ok, err := a.Store.StartRedrive(ctx, task.ID, entry)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Another redrive reopened the task between the read and the update.
		return nil, pipeline.RefuseAs(pipeline.ErrRedriveConflict, fmt.Sprintf("task %s is being redriven by another request", task.ID))
	}
	return a.resume(ctx, task.ID, rec, from, steps, task.RedriveCount+1)
}

// resume makes the steps from `from` on pending and returns the redrive's starting point.
func (a *Activities) resume(ctx context.Context, taskID string, rec *pipeline.SchemaRecord, from int, steps []pipeline.StepRecord,
	count int) (*pipeline.RedriveResult, error) {
	if err := a.Store.ResetSteps(ctx, taskID, from); err != nil {
		return nil, err
	}
	res := &pipeline.RedriveResult{Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema, FromStep: from, Count: count}
	for _, st := range steps[:from] {
		res.Outputs = append(res.Outputs, st.Output)
	}
	return res, nil
}

// PipelineRedriveBatch redrives the next batch of a bulk redrive: it lists the batch's tasks
// (RedriveBatch) and asks for each one's redrive under the bulk's redrive id. Idempotent: a task's
// redrive is idempotent per (task, redrive id), and the listing includes the tasks this bulk
// redrove already, so a retried batch answers the same tasks with the same outcomes.
func (a *Activities) PipelineRedriveBatch(ctx context.Context, req pipeline.RedriveBatchRequest) (*pipeline.RedriveBatchResult, error) {
	redriveID := pipeline.BulkRedriveID(req.ID)
	ids, err := a.Store.RedriveBatch(ctx, req.Filter, redriveID, req.After, int64(req.Limit))
	if err != nil {
		return nil, err
	}
	return bulk.Work(req, ids, func(id string) pipeline.RedriveOutcome { return a.redriveOne(ctx, id, redriveID, req.ID) }), nil
}

// redriveOne redrives one task of a bulk redrive and says what came of it.
func (a *Activities) redriveOne(ctx context.Context, taskID, redriveID, bulkID string) pipeline.RedriveOutcome {
	out := pipeline.RedriveOutcome{TaskID: taskID, Outcome: pipeline.OutcomeRedriven}
	task, err := a.Store.GetTask(ctx, taskID)
	if err == nil {
		_, err = a.Redriver.RedriveTask(ctx, task, redriveID, bulkID, a.RedriveWindow)
	}
	switch {
	case err == nil:
	case errors.Is(err, pipeline.ErrRedriveConflict), errors.Is(err, pipeline.ErrRedriveExpired),
		errors.Is(err, pipeline.ErrQuotaExhausted), errors.Is(err, pipeline.ErrNotFound):
		out.Outcome, out.Detail = pipeline.OutcomeSkipped, err.Error()
	default:
		out.Outcome, out.Detail = pipeline.OutcomeError, err.Error()
	}
	return out
}
