package pipeline

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
)

// Register registers the pipeline workflows under their function names and the activities of a
// under their type names. Those names are dotted ("pipeline.AdmitTask", older than calling
// activities by method value) and recorded in histories, so they stay: the SDK resolves the
// method value a workflow executes to the name its method was registered under. The method names
// must therefore be unique among the worker's activities.
func Register(w worker.Registry, a *pipelineact.Activities) {
	w.RegisterWorkflow(PipelineWorkflow)
	w.RegisterWorkflow(ProviderHealthWorkflow)
	register := func(fn any, name string) { w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	register(a.AdmitTask, "pipeline.AdmitTask")
	register(a.ChooseProviders, "pipeline.ChooseProviders")
	register(a.CallSync, "pipeline.CallSync")
	register(a.SubmitAsync, "pipeline.SubmitAsync")
	register(a.PollAsync, "pipeline.PollAsync")
	register(a.InvokeSCF, "pipeline.InvokeSCF")
	register(a.FinishStep, "pipeline.FinishStep")
	register(a.FinishTask, "pipeline.FinishTask")
	register(a.CheckProviderHealth, "pipeline.CheckProviderHealth")
}
