// Package taskecho is the domain core of the TaskEcho-compatible task server: the documents of
// projects, queues and tasks, the submit (push) semantics, the pull lease protocol and the queue
// operations. HTTP handlers (api/taskecho), the console and Temporal activities all call the same
// Server parts (Intake, Leases, QueueOps, Admin, Lookup), so every rule lives in exactly one
// place. The package states what it needs from storage as Store (package taskechodb implements it
// on MongoDB) and from monitoring as Metrics (package taskechoprom).
package taskecho

import "time"

// Task sources: who created or last wrote the task. Only server tasks are pullable.
const (
	SourceServer = "server"
	SourceClient = "client"
)

// Task statuses as stored (always lowercase).
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// Release reasons recorded in pull_history: who ended a lease and why.
const (
	ReleaseClient  = "client"   // the puller released or confirmed it, or pushed the task back
	ReleaseTimeout = "timeout"  // the lease outlived pull_timeout
	ReleaseServer  = "server"   // an admin edited, reset or deleted the task
	ReleaseQueueOp = "queue-op" // a queue reset / reset-error / re-run
)

// Released-by identities used when no API key ended the lease.
const (
	ReleasedByTimeout = "timeout"
)

// OpTaskReRun is the re-run of one task; the queue-wide operations are package queueop's.
const OpTaskReRun = "task-re-run"

// Deletion reasons. A task deleted by the server answers 410 to a later push; a client task the
// submit payload omitted is soft-deleted too (nothing is lost for audit) but a later submit that
// names it again revives it, as TaskEcho clients expect.
const (
	DeletedByServer  = "server"
	DeletedByOmitted = "omitted"
)

// Conflict policies for a push over a server edit the client has not pulled.
const (
	ConflictOverwrite = "overwrite"
	ConflictReject    = "reject"
)

// Project is one TaskEcho project, addressed by its external project_id.
type Project struct {
	ID             ID          `bson:"_id,omitempty"`
	ProjectID      string      `bson:"project_id"`
	Name           string      `bson:"name"`
	ClientInfo     *ClientInfo `bson:"client_info"`
	GitInfo        *GitInfo    `bson:"git_info"`
	Metadata       *Metadata   `bson:"metadata"`
	ConflictPolicy string      `bson:"conflict_policy,omitempty"`
	LastTaskAt     *time.Time  `bson:"last_task_at"`
	CreatedAt      time.Time   `bson:"created_at"`
	UpdatedAt      time.Time   `bson:"updated_at"`
}

// ClientInfo describes the machine that last submitted the project.
type ClientInfo struct {
	Username    *string `bson:"username" json:"username"`
	Hostname    *string `bson:"hostname" json:"hostname"`
	ProjectPath *string `bson:"project_path" json:"project_path"`
}

// GitInfo is the repository the submitting client works in.
type GitInfo struct {
	Repository *string `bson:"repository" json:"repository"`
	Branch     *string `bson:"branch" json:"branch"`
}

// Metadata is the UI-editable title, notes and tags of a project.
type Metadata struct {
	CustomTitle *string   `bson:"custom_title"`
	Notes       *string   `bson:"notes"`
	Tags        []string  `bson:"tags"`
	CreatedAt   time.Time `bson:"created_at"`
	UpdatedAt   time.Time `bson:"updated_at"`
}

// Queue is a named task list inside a project. Its tasks live in the tasks collection.
type Queue struct {
	ID            ID         `bson:"_id,omitempty"`
	ProjectID     string     `bson:"project_id"`
	QueueID       string     `bson:"queue_id"`
	Name          string     `bson:"name"`
	Meta          any        `bson:"meta"`
	LastTaskAt    *time.Time `bson:"last_task_at"`
	LastResetAt   *time.Time `bson:"last_reset_at"`
	LastOperation *string    `bson:"last_operation"`
	CreatedAt     time.Time  `bson:"created_at"`
	UpdatedAt     time.Time  `bson:"updated_at"`
}

// Task is one document of the tasks collection. QueueID is nil for a project-level task.
//
// The lease fields (PulledAt, PulledBy, LeaseID, LeaseExpiresAt) describe the current pull, if any;
// LeaseID is the fencing token every release/confirm must match. PullHistory keeps one entry per
// pull; the open entry (ReleasedAt nil) is always the last one and belongs to LeaseID.
type Task struct {
	ID ID `bson:"_id,omitempty"`
	// Key is project_id, queue_id ("" at project level) and task_id joined by a unit separator;
	// its unique index makes (project, queue, task id) unique even where null is not indexed.
	Key string `bson:"key"`
	// Rev counts writes; every write that depends on what it read filters on it (see guard.go).
	Rev              int64      `bson:"rev"`
	ProjectID        string     `bson:"project_id"`
	QueueID          *string    `bson:"queue_id"`
	TaskID           string     `bson:"task_id"`
	Name             string     `bson:"name"`
	Prompt           string     `bson:"prompt"`
	SpecFile         []string   `bson:"spec_file"`
	Status           string     `bson:"status"`
	Report           *string    `bson:"report"`
	Tags             []string   `bson:"tags"`
	Source           string     `bson:"source"`
	CreatedAt        time.Time  `bson:"created_at"`
	UpdatedAt        time.Time  `bson:"updated_at"`
	ServerModifiedAt *time.Time `bson:"server_modified_at"`
	// PendingSince is when the task last became pending; an execution's duration runs from it.
	PendingSince   *time.Time  `bson:"pending_since,omitempty"`
	PulledAt       *time.Time  `bson:"pulled_at"`
	PulledBy       *string     `bson:"pulled_by"`
	LeaseID        *string     `bson:"lease_id"`
	LeaseExpiresAt *time.Time  `bson:"lease_expires_at"`
	Priority       any         `bson:"priority"`
	PriorityRank   int         `bson:"priority_rank"`
	ExpiresAt      *time.Time  `bson:"expires_at"`
	ArchivedAt     *time.Time  `bson:"archived_at"`
	DeletedAt      *time.Time  `bson:"deleted_at"`
	DeletedReason  *string     `bson:"deleted_reason"`
	PullHistory    []PullEntry `bson:"pull_history"`
	Messages       []Message   `bson:"messages"`
	Logs           []LogEntry  `bson:"logs"`
	// MessageSeq and LogSeq count the entries of Messages and Logs. An append $incs the counter in
	// the same update that $pushes the entry, so the counter's new value names the entry's
	// position (its message_id / log_id) without reading the task first.
	MessageSeq int64 `bson:"message_seq"`
	LogSeq     int64 `bson:"log_seq"`
	// PushID is the submit that last wrote the task; a push re-reads it to tell which of its
	// writes applied.
	PushID string `bson:"push_id,omitempty"`
}

// PullEntry is one pull of a task and how it ended.
type PullEntry struct {
	LeaseID    string     `bson:"lease_id" json:"lease_id"`
	PulledAt   time.Time  `bson:"pulled_at" json:"pulled_at"`
	PulledBy   string     `bson:"pulled_by" json:"pulled_by"`
	ReleasedAt *time.Time `bson:"released_at" json:"released_at"`
	ReleasedBy *string    `bson:"released_by" json:"released_by"`
	Reason     *string    `bson:"reason" json:"reason"`
	// PushedAt is set when the lease ended by success (a push through submit or a confirm).
	PushedAt *time.Time `bson:"pushed_at" json:"pushed_at"`
}

// Message is one conversation entry of a task; Role is stored UPPERCASE like TaskEcho.
type Message struct {
	Role      string    `bson:"role"`
	Content   string    `bson:"content"`
	SessionID *string   `bson:"session_id"`
	CreatedAt time.Time `bson:"created_at"`
}

// LogEntry is one log line of a task.
type LogEntry struct {
	Content   string    `bson:"content"`
	CreatedAt time.Time `bson:"created_at"`
}

// AuditEntry is one row of audit_log: who did what to which tasks, and how many.
type AuditEntry struct {
	ID        ID             `bson:"_id,omitempty" json:"id"`
	At        time.Time      `bson:"at" json:"at"`
	Actor     string         `bson:"actor" json:"actor"`
	Action    string         `bson:"action" json:"action"`
	ProjectID string         `bson:"project_id" json:"project_id"`
	QueueID   *string        `bson:"queue_id" json:"queue_id"`
	TaskIDs   []string       `bson:"task_ids" json:"task_ids"`
	Count     int            `bson:"count" json:"count"`
	Details   map[string]any `bson:"details,omitempty" json:"details,omitempty"`
}

// queueLabel renders where a task lives, as TaskEcho's move response does: "project" or "queue:<id>".
func queueLabel(q *string) string {
	if q == nil {
		return "project"
	}
	return "queue:" + *q
}

// LeaseLive reports whether the task holds a lease that has not expired at now.
func (t *Task) LeaseLive(now time.Time) bool {
	return t.LeaseID != nil && t.LeaseExpiresAt != nil && t.LeaseExpiresAt.After(now)
}
