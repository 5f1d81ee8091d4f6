package pipeline

import (
	"go.temporal.io/sdk/worker"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
)

// Register registers PipelineWorkflow, ProviderHealthWorkflow and PipelineRedriveBulkWorkflow under
// their function names and the activities of a under their method names (PipelineAdmitTask, …).
func Register(w worker.Registry, a *pipelineact.Activities) {
	w.RegisterWorkflow(PipelineWorkflow)
	w.RegisterWorkflow(ProviderHealthWorkflow)
	w.RegisterWorkflow(PipelineRedriveBulkWorkflow)
	w.RegisterActivity(a)
}
