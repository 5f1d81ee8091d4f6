package pipeline

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
)

// Register registers PipelineWorkflow, ProviderHealthWorkflow and PipelineRedriveBulkWorkflow under
// their function names and the activities of a under their method names (PipelineAdmitTask, …).
// Under Worker Versioning a task and a bulk redrive end within a deploy, so they are Pinned to the
// build they started on and may change freely in the next one; the health check, which a schedule
// starts, moves to the current build (AutoUpgrade).
func Register(w worker.Registry, a *pipelineact.Activities) {
	w.RegisterWorkflowWithOptions(PipelineWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterWorkflowWithOptions(ProviderHealthWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterWorkflowWithOptions(PipelineRedriveBulkWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorPinned})
	w.RegisterActivity(a)
}
