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
	DeliveryWorkflowName = webhook.DeliveryWorkflowName
	SweepWorkflowName    = "WebhookResultWorker"
	CreatorWorkflowName  = "WebhookResultCreator"
	GroupsWorkflowName   = "CreateWebhookResultsForGroups"
)

// Activity names: the contract lives in internal/webhook (contract.go) so that activities/webhook
// does not import this package; these names and the type aliases below keep the workflow code as
// it was.
const (
	AttemptActivity      = webhook.AttemptActivity
	WriteBackActivity    = webhook.WriteBackActivity
	SweepActivity        = webhook.SweepActivity
	EscalateActivity     = webhook.EscalateActivity
	VideoRowsActivity    = webhook.VideoRowsActivity
	SingleURLActivity    = webhook.SingleURLActivity
	GroupRowsActivity    = webhook.GroupRowsActivity
	DeliveryKind         = webhook.DeliveryKind
	QueryState           = "state"
	maxIterationsPerRun  = 200
	defaultReadinessWait = 15 * time.Second
	ClaimHold            = webhook.ClaimHold
)

// DeliveryState is what the state query returns.
type DeliveryState struct {
	Status     string   `json:"webhook_status"`
	RetryCount int      `json:"retry_count"`
	Checks     int      `json:"checks"`
	Waiting    []string `json:"waiting,omitempty"`
	LastError  string   `json:"last_error,omitempty"`
}

// CreatorResult reports both creators.
type CreatorResult struct {
	Video     webhook.CreateResult `json:"video_screen_capture"`
	SingleURL webhook.CreateResult `json:"single_url_capture"`
}

// The types the workflows exchange with their activities (see internal/webhook/contract.go).
type (
	Target         = webhook.Target
	Policy         = webhook.Policy
	DeliveryInput  = webhook.DeliveryInput
	AttemptInput   = webhook.AttemptInput
	AttemptResult  = webhook.AttemptResult
	WriteBackInput = webhook.WriteBackInput
	SweepInput     = webhook.SweepInput
	SweepResult    = webhook.SweepResult
	CreatorInput   = webhook.CreatorInput
	GroupsInput    = webhook.GroupsInput
)

// DeliveryID is the workflow ID of a row: webhook-{table}-{record_id}.
func DeliveryID(tableID, recordID string) string { return webhook.DeliveryID(tableID, recordID) }
