package pipeline

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// versionPrefixedNames: the workflows schedule their activities by the Pipeline-prefixed method
// names (PipelineAdmitTask, …), unique across subsystems. Runs started before keep scheduling the
// dotted names their histories recorded ("pipeline.AdmitTask", …), which legacyActivities keeps
// registered. Both workflows branch on it once, before their first activity.
const versionPrefixedNames = "pipeline-prefixed-activity-names"

// activityFuncs are the activities one PipelineWorkflow run schedules, as method values on a nil
// receiver: they only name the activity and type its arguments.
type activityFuncs struct {
	admit       func(context.Context, pipeline.AdmitRequest) (*pipeline.AdmitResult, error)
	choose      func(context.Context, pipeline.ChooseRequest) (*pipeline.ChooseResult, error)
	callSync    func(context.Context, pipeline.CallRequest) (*pipeline.CallResult, error)
	submitAsync func(context.Context, pipeline.CallRequest) (*pipeline.SubmitResult, error)
	pollAsync   func(context.Context, pipeline.PollRequest) (*pipeline.PollResult, error)
	invokeSCF   func(context.Context, pipeline.CallRequest) (*pipeline.InvokeResult, error)
	finishStep  func(context.Context, pipeline.FinishStepRequest) error
	finishTask  func(context.Context, pipeline.FinishTaskRequest) error
}

// activitiesFor picks the names of a run's versionPrefixedNames version.
func activitiesFor(v workflow.Version) activityFuncs {
	if v == workflow.DefaultVersion {
		var l *legacyActivities
		return activityFuncs{admit: l.AdmitTask, choose: l.ChooseProviders, callSync: l.CallSync, submitAsync: l.SubmitAsync,
			pollAsync: l.PollAsync, invokeSCF: l.InvokeSCF, finishStep: l.FinishStep, finishTask: l.FinishTask}
	}
	var a *pipelineact.Activities
	return activityFuncs{admit: a.PipelineAdmitTask, choose: a.PipelineChooseProviders, callSync: a.PipelineCallSync,
		submitAsync: a.PipelineSubmitAsync, pollAsync: a.PipelinePollAsync, invokeSCF: a.PipelineInvokeSCF,
		finishStep: a.PipelineFinishStep, finishTask: a.PipelineFinishTask}
}

// healthCheckFor is ProviderHealthWorkflow's one activity in a run's versionPrefixedNames version.
func healthCheckFor(v workflow.Version) func(context.Context) (*pipeline.HealthReport, error) {
	if v == workflow.DefaultVersion {
		var l *legacyActivities
		return l.CheckProviderHealth
	}
	var a *pipelineact.Activities
	return a.PipelineCheckProviderHealth
}

// legacyNames maps each legacyActivities method to the dotted activity type that runs started
// before versionPrefixedNames recorded. Local activities (admission, provider choice, step and
// task bookkeeping) are matched by that exact name on replay.
func legacyNames(l *legacyActivities) map[string]any {
	return map[string]any{
		"pipeline.AdmitTask":           l.AdmitTask,
		"pipeline.ChooseProviders":     l.ChooseProviders,
		"pipeline.CallSync":            l.CallSync,
		"pipeline.SubmitAsync":         l.SubmitAsync,
		"pipeline.PollAsync":           l.PollAsync,
		"pipeline.InvokeSCF":           l.InvokeSCF,
		"pipeline.FinishStep":          l.FinishStep,
		"pipeline.FinishTask":          l.FinishTask,
		"pipeline.CheckProviderHealth": l.CheckProviderHealth,
	}
}

// registerLegacy registers the dotted names, each doing what its Pipeline-prefixed successor
// does. The SDK resolves a method value a workflow executes to the name its method was registered
// under, so these method names (AdmitTask, …) must stay unique among every activity the worker
// registers (worker/names_test.go checks it).
func registerLegacy(w worker.ActivityRegistry, a *pipelineact.Activities) {
	for name, fn := range legacyNames(&legacyActivities{acts: a}) {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// legacyActivities holds the dotted activity names that pipelines started before
// versionPrefixedNames still schedule. It is a struct of its own, registered beside
// pipelineact.Activities, so the old names stay out of the activities' own API. Delete it, with
// the DefaultVersion branches, once every run started before the change has closed and the
// namespace's retention has passed since (a query on a closed run replays it):
// docs/pipelines.md "Activity names and versioning".
type legacyActivities struct{ acts *pipelineact.Activities }

func (l *legacyActivities) AdmitTask(ctx context.Context, req pipeline.AdmitRequest) (*pipeline.AdmitResult, error) {
	return l.acts.PipelineAdmitTask(ctx, req)
}

func (l *legacyActivities) ChooseProviders(ctx context.Context, req pipeline.ChooseRequest) (*pipeline.ChooseResult, error) {
	return l.acts.PipelineChooseProviders(ctx, req)
}

func (l *legacyActivities) CallSync(ctx context.Context, req pipeline.CallRequest) (*pipeline.CallResult, error) {
	return l.acts.PipelineCallSync(ctx, req)
}

func (l *legacyActivities) SubmitAsync(ctx context.Context, req pipeline.CallRequest) (*pipeline.SubmitResult, error) {
	return l.acts.PipelineSubmitAsync(ctx, req)
}

func (l *legacyActivities) PollAsync(ctx context.Context, req pipeline.PollRequest) (*pipeline.PollResult, error) {
	return l.acts.PipelinePollAsync(ctx, req)
}

func (l *legacyActivities) InvokeSCF(ctx context.Context, req pipeline.CallRequest) (*pipeline.InvokeResult, error) {
	return l.acts.PipelineInvokeSCF(ctx, req)
}

func (l *legacyActivities) FinishStep(ctx context.Context, req pipeline.FinishStepRequest) error {
	return l.acts.PipelineFinishStep(ctx, req)
}

func (l *legacyActivities) FinishTask(ctx context.Context, req pipeline.FinishTaskRequest) error {
	return l.acts.PipelineFinishTask(ctx, req)
}

func (l *legacyActivities) CheckProviderHealth(ctx context.Context) (*pipeline.HealthReport, error) {
	return l.acts.PipelineCheckProviderHealth(ctx)
}
