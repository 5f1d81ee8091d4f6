package pipeline

import "go.temporal.io/sdk/worker"

// Register registers the pipeline workflows under their function names.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflow(PipelineWorkflow)
	r.RegisterWorkflow(ProviderHealthWorkflow)
}
