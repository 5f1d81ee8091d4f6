package entry

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/taskloom/taskloom/internal/entry"
)

// markTries bounds the attempts at recording a part that went out (a MongoDB blip); markBackoff
// is the first wait between them, doubled each time; markTimeout bounds them all.
const (
	markTries   = 4
	markBackoff = 250 * time.Millisecond
	markTimeout = 10 * time.Second
)

// EntrySendReply sends a completed Telegram task's result to its chat as consecutive messages
// (entry.ReplyParts: Telegram's limit is 4,096 UTF-16 units a message), in order, the first one
// answering the user's message. It returns the reply as sent.
//
// Progress is durable per part: after Telegram accepts part i, its message id is recorded in
// workflow_runs (reply.sent, reply.message_ids) before part i+1 is sent, and every attempt of
// this activity starts after the last recorded part. So a worker killed, an activity timed out
// or a 429/5xx between two parts sends no part twice, and the parts still arrive in order.
//
// sendMessage has no idempotency key and the Bot API cannot list a chat's messages, so one window
// is left: a worker killed after Telegram accepted a part and before its record was written (one
// MongoDB round trip) sends that part again on the next attempt. At most that part, at most once
// per such crash: the guarantee is at-least-once per part, exactly-once outside that window. A
// record that fails to be written is retried here before the attempt gives up, since the part
// is already in the chat.
//
// Telegram's 429 retry_after becomes the next retry delay; a refusal (403 bot blocked by the
// user, 400 chat not found …) fails for good with Telegram's description.
func (a *Activities) EntrySendReply(ctx context.Context, req entry.ReplyRequest) (*entry.Reply, error) {
	if a.Bot == nil {
		return nil, entry.RefuseAs(entry.ErrRejected, "TELEGRAM_BOT_TOKEN is not set")
	}
	parts := entry.ReplyParts(req.Text)
	if len(parts) == 0 {
		return nil, entry.RefuseAs(entry.ErrRejected, "the reply text is blank")
	}
	run, err := a.Runs.Get(ctx, req.TaskID)
	if err != nil {
		return nil, fmt.Errorf("load reply progress: %w", err)
	}
	if r := run.ReplyRecord(); r.Done() {
		return r, nil // an earlier attempt sent every part
	}
	progress := entry.Reply{Parts: len(parts)}
	if run.Reply != nil {
		progress.Sent, progress.MessageIDs = run.Reply.Sent, run.Reply.MessageIDs
	}
	for progress.Sent < len(parts) {
		if progress, err = a.sendPart(ctx, req, parts[progress.Sent], progress); err != nil {
			return nil, err
		}
		activity.RecordHeartbeat(ctx, progress.Sent)
	}
	a.Log.Info("telegram reply sent", "task_id", req.TaskID, "chat_id", req.ChatID, "parts", progress.Parts, "message_ids", progress.MessageIDs)
	return &progress, nil
}

// sendPart sends the next part and records it; it returns the progress with that part.
func (a *Activities) sendPart(ctx context.Context, req entry.ReplyRequest, text string, progress entry.Reply) (entry.Reply, error) {
	replyTo := int64(0)
	if progress.Sent == 0 {
		replyTo = req.ReplyTo
	}
	id, err := a.Bot.SendMessage(ctx, req.ChatID, text, replyTo)
	if err != nil {
		return progress, sendError(err, progress)
	}
	next := progress.WithPart(id, time.Now().UTC())
	return next, a.recordPart(ctx, req.TaskID, next)
}

// sendError maps a failed sendMessage: Telegram's 429 waits its retry_after, a refusal is final
// (entry.Refusals), anything else (5xx, network) is retried from the same part.
func sendError(err error, progress entry.Reply) error {
	if _, ok := entry.RefusalKindOf(err); ok {
		return entry.Refuse(err)
	}
	return fmt.Errorf("reply part %d of %d: %w", progress.Sent+1, progress.Parts, err)
}

// recordPart writes the progress after a part went out. The part is in the chat already, so the
// write outlives the attempt's cancellation (a worker shutting down, a timeout) and a failed
// write is tried again: an attempt that gave up would send the part twice. A write that finds
// other progress than the one it extends stops the attempt, unless it is its own earlier try.
func (a *Activities) recordPart(ctx context.Context, taskID string, r entry.Reply) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	var err error
	for try := range markTries {
		var ok bool
		if ok, err = a.Runs.RecordReplyPart(ctx, taskID, r); err == nil {
			if ok || a.recorded(ctx, taskID, r) {
				return nil
			}
			return fmt.Errorf("reply of task %s: part %d was recorded by another attempt", taskID, r.Sent)
		}
		if try == markTries-1 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("record reply part %d of task %s: %w", r.Sent, taskID, ctx.Err())
		case <-time.After(markBackoff << try):
		}
	}
	return fmt.Errorf("record reply part %d of task %s: %w", r.Sent, taskID, err)
}

// recorded reports whether the stored progress already holds r's last part (a write that
// applied although its answer was lost).
func (a *Activities) recorded(ctx context.Context, taskID string, r entry.Reply) bool {
	run, err := a.Runs.Get(ctx, taskID)
	if err != nil || run.Reply == nil || len(run.Reply.MessageIDs) < r.Sent {
		return false
	}
	return run.Reply.MessageIDs[r.Sent-1] == r.MessageIDs[r.Sent-1]
}

// EntryRecordReplyFailure records on the task that its reply was given up, with why. The workflow
// runs it once EntrySendReply failed for good. Idempotent (a plain $set of the failure).
func (a *Activities) EntryRecordReplyFailure(ctx context.Context, f entry.ReplyFailure) error {
	if err := a.Runs.RecordReplyFailure(ctx, f); err != nil {
		return err
	}
	a.Log.Warn("telegram reply failed", "task_id", f.TaskID, "err", f.Error)
	return nil
}
