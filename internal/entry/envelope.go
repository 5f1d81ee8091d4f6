// Package entry holds the rules and model of the entry subsystem (docs/entry.md): the
// TaskEnvelope every intake (HTTP, Telegram, CLI) builds, its validation, the idempotency key and
// the workflow ID derived from it, the workflow_runs record and EntryTaskWorkflow's contract. It
// imports no driver and opens no connection (the workflow imports it): the workflow_runs store is
// entry/entrydb, the Telegram Bot API client entry/telegrambot, the Prometheus series
// entry/entryprom, and the submitter and the operator views entry/intake.
package entry

import "time"

// TaskType is the envelope's type; there is one.
const TaskType = "workflow.execute"

// Channels an envelope arrives through (payload.telemetry.channel).
const (
	ChannelHTTP     = "http"
	ChannelTelegram = "telegram"
	ChannelCLI      = "cli"
)

// Channels lists every channel, in the order stats report them.
var Channels = []string{ChannelHTTP, ChannelTelegram, ChannelCLI}

// Task statuses (the envelope's status and GET /api/workflows/tasks/{task_id}).
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusRetrying   = "retrying"
	StatusCompleted  = "completed"
	StatusSuspended  = "suspended"
	StatusDropped    = "dropped"
	StatusFailed     = "failed"
	// StatusTerminated: the execution was ended from outside (terminate, timeout, cancel) before
	// the workflow recorded an end; lastError says by whom and why.
	StatusTerminated = "terminated"
)

// AutoDropReason begins the drop reason of a task the auto-drop ended (ENTRY_SUSPENDED_DROP_AFTER).
const AutoDropReason = "auto-drop"

// Statuses lists every status, in the order stats report them.
var Statuses = []string{StatusPending, StatusProcessing, StatusRetrying, StatusCompleted, StatusSuspended, StatusDropped, StatusFailed}

// Terminal reports whether a task in status s will not run again by itself.
func Terminal(s string) bool {
	return s == StatusCompleted || s == StatusDropped || s == StatusFailed || s == StatusTerminated
}

// TaskEnvelope is the task every intake enqueues: what to run, for whom, and how to retry it.
type TaskEnvelope struct {
	TaskID  string  `json:"taskId"`
	Type    string  `json:"type"`
	Payload Payload `json:"payload"`
	Context Context `json:"context"`
	Retry   Retry   `json:"retry"`
	Status  string  `json:"status"`
}

// Payload is what the pipeline runs on.
type Payload struct {
	// WorkflowID names the pipeline to run (pipeline_schemas.name); WorkflowVersion pins a
	// version, empty meaning the latest.
	WorkflowID      string         `json:"workflowId"`
	WorkflowVersion string         `json:"workflowVersion,omitempty"`
	UserText        string         `json:"userText"`
	HistoryChunks   []string       `json:"historyChunks"`
	Policy          map[string]any `json:"policy,omitempty"`
	CoreEnvelope    map[string]any `json:"coreEnvelope"`
	Telemetry       Telemetry      `json:"telemetry"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	Source          string         `json:"source"`
}

// Telemetry says where the envelope came from; the retry curve depends on Channel.
type Telemetry struct {
	Channel   string `json:"channel"`
	RequestID string `json:"requestId,omitempty"`
}

// Context carries the idempotency key, tracing ids and the task's owner.
type Context struct {
	IdempotencyKey string         `json:"idempotencyKey"`
	TraceID        string         `json:"traceId,omitempty"`
	User           map[string]any `json:"user,omitempty"`
	RequestID      string         `json:"requestId,omitempty"`
	// Owner is who submitted the task (see OwnerKey); the intake sets it, never the body, and
	// only the owner or a key bound to no project with admin level reads the task.
	Owner string `json:"owner,omitempty"`
}

// Owners of tasks that no API key submitted. No key is either of them, so only an admin key
// bound to no project reads such a task over HTTP.
const (
	OwnerTelegram = "telegram"
	OwnerCLI      = "cli"
)

// OwnerKey is the owner of a task submitted over HTTP with the API key keyID.
func OwnerKey(keyID string) string { return "key:" + keyID }

// Retry is the envelope's retry budget: Count retries done out of Max; NextAttemptAt is when the
// next one runs (zero when none is scheduled).
type Retry struct {
	Count         int       `json:"count" bson:"count"`
	Max           int       `json:"max" bson:"max"`
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero" bson:"next_attempt_at,omitempty"`
}

// ChatID is coreEnvelope.metadata.chat_id as text ("" when missing).
func (p *Payload) ChatID() string {
	md, _ := p.CoreEnvelope["metadata"].(map[string]any)
	return idText(md["chat_id"])
}

// UserID is the id of the user the context names (a string or an integral JSON number), "" when
// it names none.
func (c *Context) UserID() string { return idText(c.User["id"]) }
