package webhook

import (
	"go.temporal.io/sdk/worker"

	webhookacts "github.com/taskloom/taskloom/activities/webhook"
)

// Register registers the webhook workflows and activities on w. The activities are registered
// under their method names, which are the names the workflows call them by (a.WebhookAttempt,
// …) and the names the recorded histories hold.
func Register(w worker.Registry, a *webhookacts.Activities) {
	RegisterWorkflows(w)
	w.RegisterActivity(a)
}

// RegisterWorkflows registers the webhook workflows under their function names (the
// *WorkflowName constants here and webhook.DeliveryWorkflowName); the replayer needs no
// activities.
func RegisterWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflow(WebhookDeliveryWorkflow)
	w.RegisterWorkflow(WebhookResultWorker)
	w.RegisterWorkflow(WebhookResultCreator)
	w.RegisterWorkflow(CreateWebhookResultsForGroups)
}
