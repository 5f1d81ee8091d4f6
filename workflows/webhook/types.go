// Package webhook holds the deterministic workflows of seed 000's webhook result table:
// WebhookDeliveryWorkflow (one per result row), the WebhookResultWorker sweep, the
// WebhookResultCreator per app and CreateWebhookResultsForGroups. Side effects live in
// activities/webhook; this package knows their names and types only.
package webhook

import (
	"time"

	"github.com/taskloom/taskloom/internal/webhook"
)

// Workflow type names.
const (
	DeliveryWorkflowName = "WebhookDeliveryWorkflow"
	SweepWorkflowName    = "WebhookResultWorker"
	CreatorWorkflowName  = "WebhookResultCreator"
	GroupsWorkflowName   = "CreateWebhookResultsForGroups"
)

// Activity names (registered by activities/webhook.Activities' methods).
const (
	AttemptActivity      = "WebhookAttempt"
	WriteBackActivity    = "WebhookWriteBack"
	SweepActivity        = "WebhookSweepRows"
	EscalateActivity     = "WebhookEscalateFailedTasks"
	VideoRowsActivity    = "WebhookCreateVideoRows"
	SingleURLActivity    = "WebhookCreateSingleURLRows"
	GroupRowsActivity    = "WebhookCreateGroupRows"
	DeliveryKind         = "webhook-delivery"
	QueryState           = "state"
	maxIterationsPerRun  = 200
	defaultReadinessWait = 15 * time.Second
)

// Target is where a workflow reads and pushes: the tables and the summary receiver.
type Target struct {
	URLs       webhook.URLs `json:"urls"`
	SummaryURL string       `json:"summary_url"`
}

// Policy shapes the delivery loop (WEBHOOK_READINESS_*, WEBHOOK_RETRY_BACKOFF).
type Policy struct {
	ReadinessBackoff    time.Duration `json:"readiness_backoff"`
	ReadinessBackoffMax time.Duration `json:"readiness_backoff_max"`
	ReadinessDeadline   time.Duration `json:"readiness_deadline"`
	RetryBackoff        time.Duration `json:"retry_backoff"`
}

// DeliveryInput starts (or continues) WebhookDeliveryWorkflow for one row.
type DeliveryInput struct {
	Target Target      `json:"target"`
	Row    webhook.Row `json:"row"`
	Policy Policy      `json:"policy"`
	// Since is when the row was first seen waiting (carried over continue-as-new) and the
	// start of the readiness deadline.
	Since time.Time `json:"since"`
	// Wait is the current readiness backoff (carried over continue-as-new).
	Wait time.Duration `json:"wait"`
}

// DeliveryState is what the state query returns.
type DeliveryState struct {
	Status     string   `json:"webhook_status"`
	RetryCount int      `json:"retry_count"`
	Checks     int      `json:"checks"`
	Waiting    []string `json:"waiting,omitempty"`
	LastError  string   `json:"last_error,omitempty"`
}

// AttemptInput asks the attempt activity to check readiness and, when ready, push.
type AttemptInput struct {
	Target Target      `json:"target"`
	Row    webhook.Row `json:"row"`
}

// AttemptResult: Ready=false means "wait" (Waiting says on what); otherwise Err is empty on a
// successful push and holds the failure otherwise.
type AttemptResult struct {
	Ready     bool      `json:"ready"`
	Waiting   []string  `json:"waiting,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Err       string    `json:"err,omitempty"`
}

// WriteBackInput applies a transition to a row.
type WriteBackInput struct {
	URLs       webhook.URLs       `json:"urls"`
	RecordID   string             `json:"record_id"`
	Transition webhook.Transition `json:"transition"`
}

// SweepInput drives one WebhookResultWorker scan.
type SweepInput struct {
	Target Target            `json:"target"`
	Filter webhook.RowFilter `json:"filter"`
	Policy Policy            `json:"policy"`
}

// SweepResult counts what a scan did.
type SweepResult struct {
	Candidates int `json:"candidates"`
	Ensured    int `json:"ensured"` // delivery workflows started or found running
	Escalated  int `json:"escalated_tasks"`
}

// CreatorInput drives one WebhookResultCreator run for an app.
type CreatorInput struct {
	URLs                   webhook.URLs `json:"urls"`
	App                    string       `json:"app"`
	EnableSingleURLCapture bool         `json:"enable_single_url_capture"`
	ScanDate               string       `json:"scan_date,omitempty"`
}

// CreatorResult reports both creators.
type CreatorResult struct {
	Video     webhook.CreateResult `json:"video_screen_capture"`
	SingleURL webhook.CreateResult `json:"single_url_capture"`
}

// GroupsInput names the finished 综合页搜索 parent task.
type GroupsInput struct {
	URLs         webhook.URLs `json:"urls"`
	ParentTaskID string       `json:"parent_task_id"`
}

// DeliveryID is the workflow ID of a row: webhook-{table}-{record_id}.
func DeliveryID(tableID, recordID string) string { return "webhook-" + tableID + "-" + recordID }
