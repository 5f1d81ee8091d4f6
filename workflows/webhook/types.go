// Package webhook holds the deterministic workflows of the webhook result table
// (docs/webhook.md): WebhookDeliveryWorkflow (one per result row), the WebhookResultWorker sweep, the
// WebhookResultCreator per app and CreateWebhookResultsForGroups; client.go is how the rest of
// taskloom starts, signals and queries them. Side effects live in activities/webhook, called by
// typed method value; the types both sides exchange live in internal/webhook (contract.go), so
// that activities/webhook never imports this package. Nothing this package links opens a
// connection (tests/arch).
package webhook

import (
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
	"github.com/taskloom/taskloom/internal/webhook"
)

// Workflow type names: the function names the workflows are registered under.
const (
	DeliveryWorkflowName = "WebhookDeliveryWorkflow"
	SweepWorkflowName    = "WebhookResultWorker"
	CreatorWorkflowName  = "WebhookResultCreator"
	GroupsWorkflowName   = "CreateWebhookResultsForGroups"
	RecoverWorkflowName  = "WebhookRecoverWorkflow"
)

// SignalSweepOutcome is the signal a sweep sends to the delivery workflow that holds a row it
// delivered in its batch (webhook.SweepOutcome).
const SignalSweepOutcome = "webhook-sweep-outcome"

// QueryState names the delivery workflow's state query; the delivery loop continues as new after
// maxIterationsPerRun iterations and waits defaultReadinessWait when the policy gives no backoff.
const (
	QueryState           = "state"
	maxIterationsPerRun  = 200
	defaultReadinessWait = 15 * time.Second
)

// DeliveryState is what the state query returns.
type DeliveryState struct {
	Status     string   `json:"webhook_status"`
	RetryCount int      `json:"retry_count"`
	Checks     int      `json:"checks"`
	Waiting    []string `json:"waiting,omitempty"`
	LastError  string   `json:"last_error,omitempty"`
	// WaitingFor is what the row waits for (nil once delivered or given up).
	WaitingFor *waiting.For `json:"waiting_for,omitempty"`
}

// CreatorResult reports both creators.
type CreatorResult struct {
	Video     webhook.CreateResult `json:"video_screen_capture"`
	SingleURL webhook.CreateResult `json:"single_url_capture"`
}
