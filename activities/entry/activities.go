// Package entry holds the side effects of EntryTaskWorkflow: the workflow_runs record of the
// task and its status writes, the pages of bulk resume/drop, and the Telegram reply.
package entry

import (
	"context"
	"log/slog"

	"github.com/taskloom/taskloom/internal/entry"
)

// Activities holds the clients the entry activities use. Their method names are their activity
// type names (EntryStartRun …), which recorded histories carry.
type Activities struct {
	Runs Runs
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

// Bot sends Telegram messages (telegrambot.Bot). It fails with a *entry.RetryAfterError on
// Telegram's 429 and with entry.ErrRejected when Telegram refuses for good.
type Bot interface {
	SendMessage(ctx context.Context, chatID, text string, replyTo int64) (int64, error)
}

// EntryStartRun records the task the workflow runs and its first run in one write: the
// workflow_runs document inserted already processing attempt 1 (entry.StartedRun). Idempotent:
// the insert leaves an existing document as it is, and a document this activity's earlier attempt
// inserted (same sequence number and pipeline task id) counts as its own. A document written
// without starting the task gets the first status by the guarded status write.
//
// It returns the recorded status when the document belongs to a task that has already run: an
// earlier execution of the same task id that Temporal's retention has forgotten, so the start was
// not refused as a duplicate. The workflow then ends with that status instead of running the task
// a second time; nil means the workflow runs the task.
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

// EntryRecordStatus writes a status change to workflow_runs. Idempotent: the write carries the
// workflow's sequence number and applies only over an older one.
func (a *Activities) EntryRecordStatus(ctx context.Context, u entry.StatusUpdate) error {
	return a.Runs.Record(ctx, u)
}
