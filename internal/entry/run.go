package entry

import (
	"errors"
	"time"
)

// ErrNotFound: no such entry task. The store's not-found errors wrap it (and the driver's, so the
// HTTP layer's store mapping answers 404).
var ErrNotFound = errors.New("entry task not found")

// Run is one workflow_runs document. The workflow writes it when it starts (EntryAccept) and
// updates it at every status change, so it answers status queries once the workflow has closed
// (and after Temporal's retention has forgotten it).
type Run struct {
	TaskID          string `bson:"_id" json:"taskId"`
	IdempotencyKey  string `bson:"idempotency_key" json:"idempotencyKey"`
	WorkflowID      string `bson:"workflow_id" json:"workflowId"`
	WorkflowVersion string `bson:"workflow_version,omitempty" json:"workflowVersion,omitempty"`
	Channel         string `bson:"channel" json:"channel"`
	Source          string `bson:"source" json:"source"`
	ChatID          string `bson:"chat_id" json:"chatId"`
	// Owner is who submitted the task (Context.Owner); empty on tasks recorded before owners
	// were, which only an unbound admin key reads.
	Owner           string         `bson:"owner,omitempty" json:"-"`
	Status          string         `bson:"status" json:"status"`
	Retry           Retry          `bson:"retry" json:"retry"`
	Attempts        int            `bson:"attempts" json:"attempts"`
	PipelineTaskID  string         `bson:"pipeline_task_id,omitempty" json:"pipelineTaskId,omitempty"`
	Result          map[string]any `bson:"result,omitempty" json:"result,omitempty"`
	LastError       string         `bson:"last_error,omitempty" json:"lastError,omitempty"`
	SuspendedReason string         `bson:"suspended_reason,omitempty" json:"suspendedReason,omitempty"`
	SuspendedAt     *time.Time     `bson:"suspended_at,omitempty" json:"suspendedAt,omitempty"`
	// AutoDropAt is when a suspended task is dropped unless resumed (ENTRY_SUSPENDED_DROP_AFTER at
	// its acceptance); nil when auto-drop was off for it.
	AutoDropAt *time.Time `bson:"auto_drop_at,omitempty" json:"autoDropAt,omitempty"`
	// DropReason and AutoDropped record a drop by the auto-drop timer (ENTRY_SUSPENDED_DROP_AFTER).
	DropReason  string `bson:"drop_reason,omitempty" json:"dropReason,omitempty"`
	AutoDropped bool   `bson:"auto_dropped,omitempty" json:"autoDropped,omitempty"`
	// ReplyMessageID is the id of the reply's first message (the only one, for replies sent
	// before they were split); Reply is the whole reply.
	ReplyMessageID int64  `bson:"reply_message_id,omitempty" json:"replyMessageId,omitempty"`
	Reply          *Reply `bson:"reply,omitempty" json:"reply,omitempty"`
	// Seq orders the workflow's status writes: a write applies only when it is newer than the
	// stored one, so a late retry of an old activity cannot roll the status back.
	Seq         int        `bson:"seq" json:"-"`
	CreatedAt   time.Time  `bson:"created_at" json:"createdAt"`
	UpdatedAt   time.Time  `bson:"updated_at" json:"updatedAt"`
	CompletedAt *time.Time `bson:"completed_at,omitempty" json:"completedAt,omitempty"`
}

// NewRun is the workflow_runs document of an accepted envelope (EntryTaskWorkflow's first write).
func NewRun(env TaskEnvelope) *Run {
	return &Run{TaskID: env.TaskID, IdempotencyKey: env.Context.IdempotencyKey, WorkflowID: env.Payload.WorkflowID,
		WorkflowVersion: env.Payload.WorkflowVersion, Channel: env.Payload.Telemetry.Channel, Source: env.Payload.Source,
		ChatID: env.Payload.ChatID(), Owner: env.Context.Owner, Status: StatusPending, Retry: env.Retry}
}

// StartedRun is the workflow_runs document of an accepted envelope whose first run has begun:
// NewRun with the first status write u (processing, attempt 1, sequence 1) applied, so the task's
// record and its first status are one insert (EntryStartRun).
func StartedRun(env TaskEnvelope, u StatusUpdate) *Run {
	r := NewRun(env)
	r.Status, r.Retry, r.Attempts, r.PipelineTaskID, r.Seq = u.Status, u.Retry, u.Attempts, u.PipelineTaskID, u.Seq
	return r
}

// Unstarted reports a document no status change has touched: the one a workflow's own Accept
// wrote (possibly in an earlier attempt of the same activity), or an older intake's record of a
// task it may never have started. Any other document records a task that has run.
func (r *Run) Unstarted() bool { return r.Status == StatusPending && r.Seq == 0 }

// StatusOf is the status a workflow_runs document records.
func StatusOf(r *Run) *TaskStatus {
	st := &TaskStatus{TaskID: r.TaskID, Status: r.Status, Retry: r.Retry, Result: r.Result, LastError: r.LastError,
		WorkflowID: r.WorkflowID, Channel: r.Channel, Attempts: r.Attempts, PipelineTaskID: r.PipelineTaskID,
		SuspendedReason: r.SuspendedReason, SuspendedAt: r.SuspendedAt, AutoDropAt: r.AutoDropAt, DropReason: r.DropReason, AutoDropped: r.AutoDropped,
		Reply: r.ReplyRecord()}
	st.WaitingFor = WaitingFor(st, r.UpdatedAt)
	return st
}

// ReplyRecord is the document's reply: its reply field, or for a reply sent before replies were
// split, the one message reply_message_id names. Nil when no reply went out or was given up.
func (r *Run) ReplyRecord() *Reply {
	switch {
	case r.Reply != nil:
		return r.Reply
	case r.ReplyMessageID != 0:
		return &Reply{Status: ReplySent, Parts: 1, Sent: 1, MessageIDs: []int64{r.ReplyMessageID}}
	}
	return nil
}

// StatusUpdate is one status change the workflow records.
type StatusUpdate struct {
	TaskID         string
	Seq            int
	Status         string
	Retry          Retry
	Attempts       int
	PipelineTaskID string
	Result         map[string]any
	LastError      string
	// Reason is the suspension's reason, or the auto-drop's (with AutoDropped).
	Reason      string
	AutoDropped bool
	// AutoDropAt is when a suspension ends in a drop unless resumed (nil: no auto-drop).
	AutoDropAt *time.Time
	At         time.Time
}
