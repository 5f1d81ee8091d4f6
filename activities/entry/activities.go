// Package entry holds the side effects of EntryTaskWorkflow: the workflow_runs record of the
// task and its status writes, the pipeline bookkeeping of a run, and the Telegram reply.
package entry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	domain "github.com/taskloom/taskloom/internal/entry"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

// Activities holds the clients the entry activities use.
type Activities struct {
	Runs      *domain.Store
	Pipelines *pipelinedb.Store
	// Bot sends replies; nil when TELEGRAM_BOT_TOKEN is unset (the workflow then never asks).
	Bot *domain.Bot
	Log *slog.Logger
}

// Register registers every entry activity under its contract name.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.Accept, activity.RegisterOptions{Name: domain.ActAccept})
	r.RegisterActivityWithOptions(a.PrepareRun, activity.RegisterOptions{Name: domain.ActPrepareRun})
	r.RegisterActivityWithOptions(a.RecordStatus, activity.RegisterOptions{Name: domain.ActRecordStatus})
	r.RegisterActivityWithOptions(a.SendReply, activity.RegisterOptions{Name: domain.ActSendReply})
}

// Accept records the task the workflow runs in workflow_runs: the intake starts the workflow and
// writes nothing, so the document exists exactly when the workflow does. Idempotent: an insert
// keyed by the task id that leaves an existing document as it is.
func (a *Activities) Accept(ctx context.Context, env domain.TaskEnvelope) error {
	return a.Runs.Accept(ctx, domain.NewRun(env))
}

// PrepareRun resolves the pipeline version a run will use (read-only). The pipeline workflow the
// entry workflow then starts admits the task itself: it records the task and its steps and charges
// the quota in its own idempotent activity (workflows own their writes).
func (a *Activities) PrepareRun(ctx context.Context, req domain.PrepareRequest) (*domain.PrepareResult, error) {
	rec, err := a.Pipelines.GetSchema(ctx, req.Pipeline, req.Version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeUnknownPipeline, err)
	}
	if err != nil {
		return nil, fmt.Errorf("entry task %s: %w", req.EntryTaskID, err)
	}
	return &domain.PrepareResult{Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema,
		EligibleForRefund: rec.Schema.RefundsOnFailure()}, nil
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
