package webhook

import (
	"go.temporal.io/sdk/worker"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
)

// Register registers the webhook workflows under their function names and the activities under
// their method names, which are the names the workflows call them by (a.WebhookAttempt, …) and
// the names the recorded histories hold. The replay test passes a nil a.
func Register(w worker.Registry, a *webhookact.Activities) {
	w.RegisterWorkflow(WebhookDeliveryWorkflow)
	w.RegisterWorkflow(WebhookResultWorker)
	w.RegisterWorkflow(WebhookResultCreator)
	w.RegisterWorkflow(CreateWebhookResultsForGroups)
	w.RegisterWorkflow(WebhookRecoverWorkflow)
	w.RegisterActivity(a)
}
