package entry

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	entryacts "github.com/taskloom/taskloom/activities/entry"
	domain "github.com/taskloom/taskloom/internal/entry"
)

// Register registers EntryTaskWorkflow under its contract name (the submitter starts it by name)
// and the activities of a under their method names (EntryAccept …).
func Register(w worker.Registry, a *entryacts.Activities) {
	w.RegisterWorkflowWithOptions(EntryTaskWorkflow, workflow.RegisterOptions{Name: domain.WorkflowType})
	w.RegisterActivity(a)
}
