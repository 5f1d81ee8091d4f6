package intake

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/waiting"
)

// visibilityQuery selects entry workflows, optionally narrowed by more conditions.
func visibilityQuery(extra string) string {
	q := fmt.Sprintf("TaskloomKind = '%s'", entry.Kind)
	if extra != "" {
		q += " AND " + extra
	}
	return q
}

// Stats are the counts of GET /internal/tasks/stats, from Temporal visibility.
type Stats struct {
	// Counts is the number of tasks in each status (counts.processing and the others).
	Counts map[string]int64 `json:"counts"`
	// Channels is the number of tasks per channel, and of those still open (their execution runs:
	// dropped or failed).
	Channels map[string]ChannelStats `json:"channels"`
	// SuspendedThreshold is ENTRY_SUSPENDED_ALERT_THRESHOLD, so a dashboard can compare.
	SuspendedThreshold int `json:"suspendedThreshold"`
	// Replies counts Telegram replies by outcome.
	Replies ReplyStats `json:"replies"`
	// AutoDropped counts the tasks dropped because no operator resumed them within
	// ENTRY_SUSPENDED_DROP_AFTER (they are in counts.dropped too), from workflow_runs.
	AutoDropped int64 `json:"autoDropped"`
}

// ReplyStats counts Telegram replies that were refused or given up (TaskloomReply=failed).
type ReplyStats struct {
	Failed int64 `json:"failed"`
}

// ChannelStats counts one channel's tasks.
type ChannelStats struct {
	Total int64 `json:"total"`
	Open  int64 `json:"open"`
}

// Stats counts tasks by status and by channel. Visibility is eventually consistent: a status
// change shows up within about a second.
func (t *Tasks) Stats(ctx context.Context, threshold int) (*Stats, error) {
	st := &Stats{Counts: map[string]int64{}, Channels: map[string]ChannelStats{}, SuspendedThreshold: threshold}
	for _, s := range entry.Statuses {
		q := statusQuery(s)
		if q == "" {
			st.Counts[s] = 0
			continue
		}
		n, err := t.count(ctx, visibilityQuery(q))
		if err != nil {
			return nil, err
		}
		st.Counts[s] = n
	}
	open := "ExecutionStatus = 'Running'"
	for _, c := range entry.Channels {
		total, err := t.count(ctx, visibilityQuery(fmt.Sprintf("TaskloomChannel = '%s'", c)))
		if err != nil {
			return nil, err
		}
		n, err := t.count(ctx, visibilityQuery(fmt.Sprintf("TaskloomChannel = '%s' AND %s", c, open)))
		if err != nil {
			return nil, err
		}
		st.Channels[c] = ChannelStats{Total: total, Open: n}
	}
	n, err := t.count(ctx, failedRepliesQuery())
	if err != nil {
		return nil, err
	}
	st.Replies.Failed = n
	if st.AutoDropped, err = t.Runs.CountAutoDropped(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// statusQuery selects the executions in status s ("" for none visibility can tell apart). An
// entry task on the straight path (no retry, no suspension) upserts no TaskloomStatus: it keeps
// the pending it started with, and its execution's status says the rest — running is
// processing, completed is completed (docs/entry.md). A task no worker has picked up yet is
// the same running-and-pending execution, so pending counts nothing of its own: it is counted
// as processing. Any status off that path is upserted and selects as itself.
func statusQuery(s string) string {
	straight := fmt.Sprintf("TaskloomStatus IN ('%s', '%s')", entry.StatusPending, entry.StatusProcessing)
	switch s {
	case entry.StatusPending:
		return ""
	case entry.StatusProcessing:
		return fmt.Sprintf("%s AND ExecutionStatus = 'Running'", straight)
	case entry.StatusCompleted:
		return fmt.Sprintf("(TaskloomStatus = '%s' OR (%s AND ExecutionStatus = 'Completed'))", entry.StatusCompleted, straight)
	}
	return fmt.Sprintf("TaskloomStatus = '%s'", s)
}

func failedRepliesQuery() string {
	return visibilityQuery(fmt.Sprintf("TaskloomReply = '%s'", entry.ReplyFailed))
}

// CountSuspended is the number of suspended tasks (the monitor's and the alert's number).
func (t *Tasks) CountSuspended(ctx context.Context) (int64, error) {
	return t.count(ctx, suspendedQuery())
}

func suspendedQuery() string {
	return visibilityQuery(fmt.Sprintf("TaskloomStatus = '%s' AND ExecutionStatus = 'Running'", entry.StatusSuspended))
}

func (t *Tasks) count(ctx context.Context, q string) (int64, error) {
	resp, err := t.Visibility.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	if err != nil {
		return 0, fmt.Errorf("count workflows (%s): %w", q, err)
	}
	return resp.GetCount(), nil
}

// SuspendedTask is one line of GET /internal/tasks/suspended.
type SuspendedTask struct {
	TaskID     string      `json:"taskId"`
	WorkflowID string      `json:"workflowId"`
	Channel    string      `json:"channel"`
	ChatID     string      `json:"chatId,omitempty"`
	Reason     string      `json:"reason"`
	Attempts   int         `json:"attempts"`
	Retry      entry.Retry `json:"retry"`
	Since      *time.Time  `json:"since,omitempty"`
	// WaitingFor says what the task waits for (the operator, or the auto-drop).
	WaitingFor *waiting.For `json:"waiting_for,omitempty"`
}

// Suspended lists up to limit suspended tasks (in visibility's order, newest started first; SQL
// visibility refuses ORDER BY) with the reason and attempts that workflow_runs holds.
func (t *Tasks) Suspended(ctx context.Context, limit int) ([]SuspendedTask, error) {
	ids, runs, err := t.listRuns(ctx, suspendedQuery(), limit)
	if err != nil {
		return nil, fmt.Errorf("list suspended tasks: %w", err)
	}
	out := make([]SuspendedTask, 0, len(ids))
	for _, id := range ids {
		s := SuspendedTask{TaskID: id}
		if r, ok := runs[id]; ok {
			s.WorkflowID, s.Channel, s.ChatID, s.Reason = r.WorkflowID, r.Channel, r.ChatID, r.SuspendedReason
			s.Attempts, s.Retry, s.Since = r.Attempts, r.Retry, r.SuspendedAt
			s.WaitingFor = entry.StatusOf(r).WaitingFor
		}
		out = append(out, s)
	}
	return out, nil
}

// FailedReply is one Telegram task whose reply was refused or given up.
type FailedReply struct {
	TaskID     string       `json:"taskId"`
	WorkflowID string       `json:"workflowId"`
	ChatID     string       `json:"chatId,omitempty"`
	Reply      *entry.Reply `json:"reply,omitempty"`
}

// FailedReplies lists up to limit tasks whose reply failed (TaskloomReply=failed, newest started
// first) with the error and the parts sent that workflow_runs holds.
func (t *Tasks) FailedReplies(ctx context.Context, limit int) ([]FailedReply, error) {
	ids, runs, err := t.listRuns(ctx, failedRepliesQuery(), limit)
	if err != nil {
		return nil, fmt.Errorf("list failed replies: %w", err)
	}
	out := make([]FailedReply, 0, len(ids))
	for _, id := range ids {
		f := FailedReply{TaskID: id}
		if r, ok := runs[id]; ok {
			f.WorkflowID, f.ChatID, f.Reply = r.WorkflowID, r.ChatID, r.ReplyRecord()
		}
		out = append(out, f)
	}
	return out, nil
}

// listRuns lists up to limit entry executions matching query and loads their workflow_runs
// documents in one read.
func (t *Tasks) listRuns(ctx context.Context, query string, limit int) ([]string, map[string]*entry.Run, error) {
	resp, err := t.Visibility.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(limit)})
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(resp.GetExecutions()))
	for _, e := range resp.GetExecutions() {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	runs, err := t.Runs.GetMany(ctx, ids)
	return ids, runs, err
}
