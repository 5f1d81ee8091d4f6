// Package entry holds the side effects of EntryTaskWorkflow: the workflow_runs record of the
// task and its status writes, the pipeline bookkeeping of a run, and the Telegram reply.
package entry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// Activities holds the clients the entry activities use. Their method names are their activity
// type names (EntryAccept …), which recorded histories carry.
type Activities struct {
	Runs      Runs
	Pipelines Pipelines
	// Bot sends replies; nil when TELEGRAM_BOT_TOKEN is unset (the workflow then never asks).
	Bot Bot
	// Bulk works bulk resume/drop pages (EntryBulkBatch).
	Bulk Bulk
	Log  *slog.Logger
}

// Runs is the workflow_runs store (entrydb.Store).
type Runs interface {
	Accept(ctx context.Context, run *entry.Run) (*entry.Run, error)
	Get(ctx context.Context, taskID string) (*entry.Run, error)
	Record(ctx context.Context, u entry.StatusUpdate) error
	RecordReplyPart(ctx context.Context, taskID string, r entry.Reply) (bool, error)
	RecordReplyFailure(ctx context.Context, f entry.ReplyFailure) error
}

// Pipelines reads published pipeline versions (pipelinedb.Store).
type Pipelines interface {
	GetSchema(ctx context.Context, name, version string) (*pipeline.SchemaRecord, error)
}

// Bot sends Telegram messages (telegrambot.Bot). It fails with a *entry.RetryAfterError on
// Telegram's 429 and with entry.ErrRejected when Telegram refuses for good.
type Bot interface {
	SendMessage(ctx context.Context, chatID, text string, replyTo int64) (int64, error)
}

// EntryAccept records the task the workflow runs in workflow_runs: the intake starts the workflow
// and writes nothing, so the document exists exactly when the workflow does. Idempotent: an
// insert keyed by the task id that leaves an existing document as it is.
//
// It returns the recorded status when the document belongs to a task that has already run: an
// earlier execution of the same task id that Temporal's retention has forgotten, so the start was
// not refused as a duplicate. The workflow then ends with that status instead of running the task
// a second time. A nil status (also what histories recorded before this result existed decode
// to) means the workflow runs the task.
func (a *Activities) EntryAccept(ctx context.Context, env entry.TaskEnvelope) (*entry.TaskStatus, error) {
	prev, err := a.Runs.Accept(ctx, entry.NewRun(env))
	if err != nil || prev == nil || prev.Unstarted() {
		return nil, err
	}
	return entry.StatusOf(prev), nil // the workflow logs that it ends without running the task
}

// EntryStartRun records the task the workflow runs and its first run in one write: the
// workflow_runs document inserted already processing attempt 1 (entry.StartedRun), where
// EntryAccept and an EntryRecordStatus of processing took two. Idempotent: the insert leaves an
// existing document as it is, and a document this activity's earlier attempt inserted (same
// sequence number and pipeline task id) counts as its own. A document an older intake wrote
// without starting the task gets the first status by the guarded status write.
//
// Like EntryAccept, it returns the recorded status when the document belongs to a task that has
// already run; nil means the workflow runs the task.
func (a *Activities) EntryStartRun(ctx context.Context, req entry.StartRequest) (*entry.TaskStatus, error) {
	prev, err := a.Runs.Accept(ctx, entry.StartedRun(req.Envelope, req.First))
	switch {
	case err != nil:
		return nil, err
	case prev == nil || prev.Seq == req.First.Seq && prev.PipelineTaskID == req.First.PipelineTaskID:
		return nil, nil
	case prev.Unstarted():
		return nil, a.Runs.Record(ctx, req.First)
	}
	return entry.StatusOf(prev), nil
}

// EntryPrepareRun resolves the pipeline version a run will use (read-only). Executions from
// before the lean run (workflows/entry leanRunChange) call it; later ones leave the lookup to the
// pipeline workflow's admission, which reads the schema anyway. The pipeline workflow
// the entry workflow then starts admits the task itself: it records the task and its steps and
// charges the quota in its own idempotent activity (workflows own their writes).
func (a *Activities) EntryPrepareRun(ctx context.Context, req entry.PrepareRequest) (*entry.PrepareResult, error) {
	rec, err := a.Pipelines.GetSchema(ctx, req.Pipeline, req.Version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), entry.ErrTypeUnknownPipeline, err)
	}
	if err != nil {
		return nil, fmt.Errorf("entry task %s: %w", req.EntryTaskID, err)
	}
	return &entry.PrepareResult{Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema,
		EligibleForRefund: rec.Schema.RefundsOnFailure()}, nil
}

// EntryRecordStatus writes a status change to workflow_runs. Idempotent: the write carries the
// workflow's sequence number and applies only over an older one.
func (a *Activities) EntryRecordStatus(ctx context.Context, u entry.StatusUpdate) error {
	return a.Runs.Record(ctx, u)
}
