package webhook

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
)

// Register registers the webhook workflows under their function names and the activities under
// their method names, which are the names the workflows call them by (a.WebhookAttempt, …) and
// the names the recorded histories hold. The replay test passes a nil a. Under Worker Versioning
// a row's claim and delivery, a groups creation and a recovery end within a deploy (Pinned); the
// sweep and the creators, which schedules start, move to the current build (AutoUpgrade).
func Register(w worker.Registry, a *webhookact.Activities) {
	w.RegisterWorkflowWithOptions(WebhookDeliveryWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterWorkflowWithOptions(WebhookResultWorker, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterWorkflowWithOptions(WebhookResultCreator, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterWorkflowWithOptions(CreateWebhookResultsForGroups, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterWorkflowWithOptions(WebhookRecoverWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterActivity(a)
}
