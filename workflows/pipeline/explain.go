package pipeline

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/waiting"
)

// What a pipeline execution shows an operator (docs/operations.md "What each execution shows"): the state
// query's WaitingFor and Temporal's current details change together, at each state change. Both
// live in the workflow's memory only (the metadata query reads them), so they cost no command.

// stepLabel names step i the way an operator finds it: "step 2/3 composite (scf fn-x)".
func (r *run) stepLabel(i int, provider string) string {
	st := r.schema.Steps[i]
	what := string(st.Type)
	switch {
	case st.Type == pipeline.StepSCF:
		what += " " + st.SCFFunction
	case provider != "":
		what += " " + provider
	}
	return fmt.Sprintf("step %d/%d %s (%s)", i+1, len(r.schema.Steps), st.Name, what)
}

// waitOn records what step i waits for and shows it.
func (r *run) waitOn(ctx workflow.Context, i int, provider, reason, detail string, until time.Time) {
	w := waiting.New(reason, r.stepLabel(i, provider)+": "+detail, workflow.Now(ctx), until)
	r.state.WaitingFor = w
	workflow.SetCurrentDetails(ctx, w.Sentence())
}

// showDone clears the wait and shows how the run ended.
func (r *run) showDone(ctx workflow.Context) {
	r.state.WaitingFor = nil
	switch r.state.Status {
	case pipeline.StatusSuccess:
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("success: %d steps done", len(r.schema.Steps)))
	default:
		workflow.SetCurrentDetails(ctx, r.state.Status+": "+r.state.ErrorReason)
	}
}

// Activity and timer summaries, shown on each event in the Web UI's timeline.
func callSummary(verb string, st pipeline.Step, i int, provider string) string {
	return fmt.Sprintf("%s %s for step %d %s", verb, provider, i+1, st.Name)
}

func pollTimerSummary(i int, st pipeline.Step, vendorTaskID string, attempt int) string {
	return fmt.Sprintf("step %d %s: wait before poll %d/%d of vendor job %s", i+1, st.Name, attempt, st.Polling.MaxAttempts, vendorTaskID)
}

// StartMetadata is the static summary and details of a task's execution, set by whoever starts
// it (Client.Start, or the entry workflow for its child runs).
func StartMetadata(in Input) (summary, details string) {
	version := pipeline.VersionLabel(in.Version)
	parts := []string{"pipeline " + in.Pipeline + "@" + version, "user " + in.UserID, "feature " + in.FeatureID, "task " + in.TaskID}
	if in.Redrive != nil {
		parts = append(parts, "redrive "+in.Redrive.ID)
	}
	summary = explain.Summary(parts...)
	details = explain.Details(fmt.Sprintf("Pipeline task `%s`: runs the steps of pipeline **%s** version %s in order for user "+
		"`%s` (feature `%s`), stopping at the first step that fails. Its current details say which step runs and what it "+
		"waits for.", in.TaskID, in.Pipeline, version, in.UserID, in.FeatureID),
		explain.Link{Name: "Console", Path: "/ui/console/pipelines/" + in.TaskID},
		explain.Link{Name: "API", Path: "GET /api/v1/pipeline-tasks/" + in.TaskID})
	return summary, details
}
