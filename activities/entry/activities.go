// Package entry holds the side effects of EntryTaskWorkflow: the pipeline bookkeeping of a run,
// the workflow_runs status writes and the Telegram reply.
package entry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	domain "github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// Activities holds the clients the entry activities use.
type Activities struct {
	Runs      *domain.Store
	Pipelines *pipeline.Store
	// Bot sends replies; nil when TELEGRAM_BOT_TOKEN is unset (the workflow then never asks).
	Bot *domain.Bot
	Log *slog.Logger
}

// Register registers every entry activity under its contract name.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.PrepareRun, activity.RegisterOptions{Name: domain.ActPrepareRun})
	r.RegisterActivityWithOptions(a.RecordStatus, activity.RegisterOptions{Name: domain.ActRecordStatus})
	r.RegisterActivityWithOptions(a.SendReply, activity.RegisterOptions{Name: domain.ActSendReply})
}

// PrepareRun does what a pipeline task needs before its workflow starts: resolve the pipeline
// version, take one quota unit, record the task and its pending steps. Idempotent: the pipeline
// task id is fixed by the workflow, the quota ledger is keyed by it, and the task and step
// inserts treat an existing document as done.
func (a *Activities) PrepareRun(ctx context.Context, req domain.PrepareRequest) (*domain.PrepareResult, error) {
	rec, err := a.Pipelines.GetSchema(ctx, req.Pipeline, req.Version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeUnknownPipeline, err)
	}
	if err != nil {
		return nil, err
	}
	if err := a.Pipelines.ConsumeQuota(ctx, req.UserID, req.FeatureID, req.PipelineTaskID); err != nil {
		if errors.Is(err, pipeline.ErrQuotaExhausted) {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeQuotaExhausted, err)
		}
		return nil, err
	}
	task := &pipeline.Task{ID: req.PipelineTaskID, UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: rec.Name,
		Version: rec.Version, InputData: req.InputData, EligibleForRefund: rec.Schema.RefundsOnFailure()}
	if err := a.Pipelines.CreateTask(ctx, task); err != nil && !mongo.IsDuplicateKeyError(err) {
		return nil, fmt.Errorf("entry task %s: %w", req.EntryTaskID, err)
	}
	if err := a.Pipelines.CreateSteps(ctx, task.ID, rec.Schema.Steps); err != nil {
		return nil, fmt.Errorf("entry task %s: %w", req.EntryTaskID, err)
	}
	return &domain.PrepareResult{Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema,
		EligibleForRefund: task.EligibleForRefund}, nil
}

// RecordStatus writes a status change to workflow_runs. Idempotent: the write carries the
// workflow's sequence number and applies only over an older one.
func (a *Activities) RecordStatus(ctx context.Context, u domain.StatusUpdate) error {
	return a.Runs.Record(ctx, u)
}

// SendReply sends a completed Telegram task's result to its chat, once: the reply's message id is
// stored on the workflow_runs document and a retried activity that finds it sends nothing. (A
// worker dying between Telegram's answer and that write is the one way to a second reply.)
// Telegram's 429 retry_after becomes the activity's next retry delay.
func (a *Activities) SendReply(ctx context.Context, req domain.ReplyRequest) error {
	if a.Bot == nil {
		return temporal.NewNonRetryableApplicationError("TELEGRAM_BOT_TOKEN is not set", domain.ErrTypeTelegramRejected, nil)
	}
	run, err := a.Runs.Get(ctx, req.TaskID)
	if err != nil {
		return err
	}
	if run.ReplyMessageID != 0 {
		return nil
	}
	id, err := a.Bot.SendMessage(ctx, req.ChatID, req.Text, req.ReplyTo)
	var ra *domain.RetryAfterError
	switch {
	case errors.As(err, &ra):
		return temporal.NewApplicationErrorWithOptions(ra.Error(), "EntryTelegramRateLimited",
			temporal.ApplicationErrorOptions{NextRetryDelay: ra.After})
	case errors.Is(err, domain.ErrRejected):
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeTelegramRejected, err)
	case err != nil:
		return err
	}
	if _, err := a.Runs.MarkReplied(ctx, req.TaskID, id); err != nil {
		// The message went out; failing here would make a retry send it twice.
		a.Log.Warn("telegram reply sent but not recorded", "task_id", req.TaskID, "message_id", id, "err", err)
	}
	a.Log.Info("telegram reply sent", "task_id", req.TaskID, "chat_id", req.ChatID, "message_id", id)
	return nil
}
