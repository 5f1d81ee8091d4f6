package entry

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
)

// Register registers EntryTaskWorkflow under its contract name (Client.Start starts it by name),
// EntryBulkWorkflow, and the activities of a under their method names (EntryStartRun …). Under
// Worker Versioning an entry task, which can wait days for an operator, moves to the current build
// (AutoUpgrade: the one kind of workflow where a future GetVersion may appear, with its removal
// condition beside it); a bulk resume/drop ends within a deploy and is Pinned.
func Register(w worker.Registry, a *entryact.Activities) {
	w.RegisterWorkflowWithOptions(EntryTaskWorkflow, workflow.RegisterOptions{Name: entry.WorkflowType,
		VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterWorkflowWithOptions(EntryBulkWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterActivity(a)
}
