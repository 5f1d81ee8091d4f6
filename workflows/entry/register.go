package entry

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
)

// Register registers EntryTaskWorkflow under its contract name (Client.Start starts it by name),
// EntryBulkWorkflow, and the activities of a under their method names (EntryStartRun …).
func Register(w worker.Registry, a *entryact.Activities) {
	w.RegisterWorkflowWithOptions(EntryTaskWorkflow, workflow.RegisterOptions{Name: entry.WorkflowType})
	w.RegisterWorkflow(EntryBulkWorkflow)
	w.RegisterActivity(a)
}
