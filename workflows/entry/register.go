package entry

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	domain "github.com/taskloom/taskloom/internal/entry"
)

// Register registers EntryTaskWorkflow under its contract name (the submitter starts it by name).
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(EntryTaskWorkflow, workflow.RegisterOptions{Name: domain.WorkflowType})
}
