package pipeline

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// UpdateAdmission answers once the task is admitted: its argument is the request hash, its result
// an Admission, its error the refusal (pipeline.ErrNotFound, ErrInvalidInput, ErrQuotaExhausted of
// pipeline.Refusals). The validator refuses a different request under the same workflow ID
// (ErrIdempotencyConflict). Client.Start sends it with Update-With-Start.
const UpdateAdmission = "pipeline-admission"

// QueryAdmission returns the AdmissionState, also of a closed run (how Client.Start answers a
// retried request whose workflow has finished).
const QueryAdmission = "admission"

// Admission is the answer to a task creation.
type Admission struct {
	TaskID     string
	WorkflowID string
	Pipeline   string
	Version    string
	// Status is the task's status when the answer was given.
	Status string
	// Created is set on the first answer only: later ones answer a repeated request.
	Created bool
}

// Refusal is why a task was not admitted; Type is the error type of one of pipeline.Refusals.
type Refusal struct {
	Type    string
	Message string
	Field   string // ErrTypeInvalidInput: the input_data field
}

// AdmissionState is what QueryAdmission returns.
type AdmissionState struct {
	RequestHash string
	Admission   *Admission
	Refusal     *Refusal
}

// admission is the workflow's side of it: exactly one of result and refusal is set once the
// admission activity has answered.
type admission struct {
	result   *Admission
	refusal  *Refusal
	answered bool
}

func (a *admission) decided() bool { return a.result != nil || a.refusal != nil }

// Error turns a refusal into the non-retryable application error callers see.
func (f *Refusal) Error() error {
	return temporal.NewNonRetryableApplicationError(f.Message, f.Type, nil, pipeline.InputRefusal{Field: f.Field})
}

func (r *run) registerAdmission(ctx workflow.Context) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateAdmission,
		func(ctx workflow.Context, _ string) (*Admission, error) {
			first := !r.adm.answered
			r.adm.answered = true
			if err := workflow.Await(ctx, r.adm.decided); err != nil {
				return nil, err
			}
			if r.adm.refusal != nil {
				return nil, r.adm.refusal.Error()
			}
			a := *r.adm.result
			a.Status, a.Created = r.state.Status, first
			return &a, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(hash string) error {
			if hash != r.in.RequestHash {
				return pipeline.RefuseAs(pipeline.ErrIdempotencyConflict, "the idempotency key was used with a different request")
			}
			return nil
		}})
	if err != nil {
		return fmt.Errorf("register %s update: %w", UpdateAdmission, err)
	}
	err = workflow.SetQueryHandler(ctx, QueryAdmission, func() (AdmissionState, error) {
		st := AdmissionState{RequestHash: r.in.RequestHash, Refusal: r.adm.refusal}
		if r.adm.result != nil {
			a := *r.adm.result
			a.Status = r.state.Status
			st.Admission = &a
		}
		return st, nil
	})
	if err != nil {
		return fmt.Errorf("register %s query: %w", QueryAdmission, err)
	}
	return nil
}

// admit runs the admission activity. A refusal ends the workflow with the refusal's error; a task
// id an earlier run admitted (earlier != nil) ends it with that task's state, untouched.
func (r *run) admit(ctx workflow.Context) (earlier *Result, err error) {
	info := workflow.GetInfo(ctx)
	var res pipeline.AdmitResult
	err = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, bookkeepingOptions), acts.PipelineAdmitTask,
		pipeline.AdmitRequest{TaskID: r.in.TaskID, RunID: info.WorkflowExecution.RunID, UserID: r.in.UserID, FeatureID: r.in.FeatureID,
			Pipeline: r.in.Pipeline, Version: r.in.Version, InputData: r.in.InputData, RequestHash: r.in.RequestHash}).Get(ctx, &res)
	if f := refusalOf(err); f != nil {
		r.adm.refusal = f
		r.state.Status, r.state.ErrorReason = statusRefused, f.Message
		r.showDone(ctx)
		r.upsertStatus(ctx, pipeline.StatusFailed)
		return nil, f.Error()
	}
	if err != nil {
		return nil, err
	}
	r.adm.result = &Admission{TaskID: r.in.TaskID, WorkflowID: info.WorkflowExecution.ID, Pipeline: res.Pipeline, Version: res.Version}
	if res.Earlier != nil {
		r.state.Status, r.state.ErrorReason = res.Earlier.Status, res.Earlier.ErrorReason
		workflow.SetCurrentDetails(ctx, "an earlier run admitted this task; it is "+res.Earlier.Status)
		return &Result{Status: res.Earlier.Status}, nil
	}
	r.schema = res.Schema
	r.state.Status = pipeline.StatusProcessing
	r.state.StepStatus = make([]string, len(res.Schema.Steps))
	for i := range r.state.StepStatus {
		r.state.StepStatus[i] = pipeline.StatusPending
	}
	return nil, nil
}

// statusRefused is the State.Status of a run whose task was not admitted.
const statusRefused = "refused"

// refusalOf recognises the admission (and redrive admission) activity's refusals: the kinds of
// pipeline.Refusals.
func refusalOf(err error) *Refusal {
	re := pipeline.AsRefusal(err)
	if re == nil {
		return nil
	}
	return &Refusal{Type: re.Kind.Type, Message: re.Message, Field: re.Field}
}
