package entry

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

// Names shared by the workflow (workflows/entry), the activities, the API and the CLI. An
// operator signals with these names too: `temporal workflow signal --workflow-id <taskId> --name resume`.
const (
	// WorkflowType is EntryTaskWorkflow's registered name.
	WorkflowType = "EntryTaskWorkflow"
	// Kind is the TaskloomKind search attribute of entry workflows.
	Kind = "entry"
	// QueryStatus returns the task's TaskStatus while the workflow runs.
	QueryStatus = "status"
	// SignalResume runs a suspended task again with a fresh retry budget.
	SignalResume = "resume"
	// SignalDrop ends a suspended (or retrying) task as dropped.
	SignalDrop = "drop"
)

// WorkflowInput starts an EntryTaskWorkflow. The retry curve is resolved from configuration when
// the task is accepted, so a configuration change never alters a running task's history.
type WorkflowInput struct {
	Envelope TaskEnvelope
	// UserID and FeatureID are the pipeline task's quota account.
	UserID    string
	FeatureID string
	// RetryDelays[i] is the wait before retry i+1; the last one repeats.
	RetryDelays []time.Duration
	// Reply sends the result to the Telegram chat when the task completes; ReplyField picks the
	// output field sent.
	Reply      bool
	ReplyField string
	// SuspendedDropAfter is ENTRY_SUSPENDED_DROP_AFTER when the task was accepted: a suspension
	// not resumed within it ends the task as dropped (0: never). Nil for tasks accepted before
	// the setting existed, which keep waiting for an operator.
	SuspendedDropAfter *time.Duration `json:",omitempty"`
	// Carry is the state a continued-as-new run takes over (nil for a new task).
	Carry *Carry `json:",omitempty"`
}

// Carry is what EntryTaskWorkflow hands to its next run when it continues as new after many
// operator resumes.
type Carry struct {
	Attempts int
	Seq      int
}

// RetryDelay is the wait before retry n (1-based).
func (in *WorkflowInput) RetryDelay(n int) time.Duration {
	if len(in.RetryDelays) == 0 {
		return time.Second
	}
	return in.RetryDelays[min(max(n-1, 0), len(in.RetryDelays)-1)]
}

// TaskStatus is what GET /api/workflows/tasks/{task_id} answers and what the status query returns.
type TaskStatus struct {
	TaskID          string         `json:"taskId"`
	Status          string         `json:"status"`
	Retry           Retry          `json:"retry"`
	Result          map[string]any `json:"result,omitempty"`
	LastError       string         `json:"lastError,omitempty"`
	WorkflowID      string         `json:"workflowId"`
	Channel         string         `json:"channel"`
	Attempts        int            `json:"attempts"`
	PipelineTaskID  string         `json:"pipelineTaskId,omitempty"`
	SuspendedReason string         `json:"suspendedReason,omitempty"`
	SuspendedAt     *time.Time     `json:"suspendedAt,omitempty"`
	// AutoDropAt is when the suspended task is dropped unless resumed (ENTRY_SUSPENDED_DROP_AFTER).
	AutoDropAt *time.Time `json:"autoDropAt,omitempty"`
	// DropReason says why a dropped task was dropped when the auto-drop ended it (AutoDropped).
	DropReason  string `json:"dropReason,omitempty"`
	AutoDropped bool   `json:"autoDropped,omitempty"`
	// Reply is what became of a Telegram task's reply (nil for other channels, and until the
	// reply went out or was given up).
	Reply *Reply `json:"reply,omitempty"`
	// From says where the answer came from: "workflow" (a live query) or "workflow_runs".
	From string `json:"from,omitempty"`
	// WaitingFor is what the task waits for while it is not final (entry.WaitingFor).
	WaitingFor *waiting.For `json:"waiting_for,omitempty"`
}

// ReplyRequest sends a completed Telegram task's result to its chat.
type ReplyRequest struct {
	TaskID  string
	ChatID  string
	Text    string
	ReplyTo int64
}

// InputData is the pipeline task's input_data for an envelope: the text, the history, the
// policy and the metadata, plus the chat and channel for pipelines that need them.
func InputData(env *TaskEnvelope) map[string]any {
	history := make([]any, len(env.Payload.HistoryChunks))
	for i, h := range env.Payload.HistoryChunks {
		history[i] = h
	}
	data := map[string]any{
		"user_text":      env.Payload.UserText,
		"history_chunks": history,
		"chat_id":        env.Payload.ChatID(),
		"channel":        env.Payload.Telemetry.Channel,
		"entry_task_id":  env.TaskID,
	}
	if env.Payload.Policy != nil {
		data["policy"] = env.Payload.Policy
	}
	if env.Payload.Metadata != nil {
		data["metadata"] = env.Payload.Metadata
	}
	return data
}

// SignalPayload is the optional body of resume and drop signals (the CLI may send none).
type SignalPayload struct {
	Operator string `json:"operator,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// StartRequest records a task and its first run in one write (EntryStartRun): the workflow_runs
// document of Envelope, inserted already processing its first attempt (First: attempt 1,
// sequence 1, the pipeline task id of the attempt).
type StartRequest struct {
	Envelope TaskEnvelope
	First    StatusUpdate
}

// PipelineTaskID is the pipeline task id of attempt n of an entry execution: the shape NewTaskID
// gives (24 hex digits, the first eight the second the execution started, so ids sort by
// creation), the rest a hash of the entry task id, the run id and n. It is a function of
// what the execution's history holds, so a workflow computes it without recording a side effect,
// and every attempt of every run of a task gets its own id (its child workflow pipeline-{id} is
// new).
func PipelineTaskID(taskID, runID string, started time.Time, n int) string {
	var id [12]byte
	binary.BigEndian.PutUint32(id[:4], uint32(started.Unix()))
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", taskID, runID, n)))
	copy(id[4:], sum[:8])
	return hex.EncodeToString(id[:])
}
