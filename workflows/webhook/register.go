package webhook

import "go.temporal.io/sdk/worker"

// Register registers the webhook workflows under their function names (the *WorkflowName
// constants here and webhook.DeliveryWorkflowName).
func Register(w worker.WorkflowRegistry) {
	w.RegisterWorkflow(WebhookDeliveryWorkflow)
	w.RegisterWorkflow(WebhookResultWorker)
	w.RegisterWorkflow(WebhookResultCreator)
	w.RegisterWorkflow(CreateWebhookResultsForGroups)
}
