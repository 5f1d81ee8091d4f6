package pipeline

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// A redrive is a new run of a failed task's PipelineWorkflow (same workflow ID, the earlier run
// failed) whose Input carries RedriveInput: instead of the admission it runs PipelineRedriveTask,
// which reopens the task and says where to continue, then runs the remaining steps as any run
// does. Client.Redrive starts it with Update-With-Start and UpdateRedrive.

// UpdateRedrive answers once a redrive run has reopened the task: its argument is the redrive id,
// its result a RedriveAdmission, its error the refusal (pipeline.ErrTypeRedriveConflict,
// ErrTypeRedriveExpired, ErrTypeQuotaExhausted, ErrTypeRedriveRepeated). The validator refuses
// it in a run that is not that redrive (the task is running: ErrTypeRedriveConflict).
const UpdateRedrive = "pipeline-redrive"

// QueryRedrive returns the RedriveState, also of a closed run.
const QueryRedrive = "redrive"

// RedriveInput makes a run a redrive: ID is the redrive id (pipeline.RedriveIDForKey or
// pipeline.BulkRedriveID), BulkID the bulk redrive that asked for it, if any.
type RedriveInput struct {
	ID     string
	BulkID string `json:",omitempty"`
}

// RedriveAdmission is the answer to a redrive.
type RedriveAdmission struct {
	TaskID       string
	WorkflowID   string
	RedriveID    string
	RedriveCount int
	FromStep     int
	// Status is the task's status when the answer was given.
	Status string
	// Created is set on the first answer only: later ones answer a repeated request.
	Created bool
}

// RedriveState is what QueryRedrive returns: the run's redrive id ("" for a first run) and its
// answer.
type RedriveState struct {
	RedriveID string
	Admission *RedriveAdmission
	Refusal   *Refusal
}

// redrive is the workflow's side of a redrive run.
type redrive struct {
	id       string
	res      *pipeline.RedriveResult
	answered bool
}

// fromStep is the first step the run executes: 0 for a first run.
func (d *redrive) fromStep() int {
	if d == nil || d.res == nil {
		return 0
	}
	return d.res.FromStep
}

// count is the task's redrive_count in this run: 0 for a first run.
func (d *redrive) count() int {
	if d == nil || d.res == nil {
		return 0
	}
	return d.res.Count
}

func (r *run) registerRedrive(ctx workflow.Context) error {
	if r.in.Redrive != nil {
		r.redrive = &redrive{id: r.in.Redrive.ID}
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateRedrive,
		func(ctx workflow.Context, _ string) (*RedriveAdmission, error) {
			first := !r.redrive.answered
			r.redrive.answered = true
			if err := workflow.Await(ctx, r.adm.decided); err != nil {
				return nil, err
			}
			if r.adm.refusal != nil {
				return nil, r.adm.refusal.Error()
			}
			a := r.redriveAdmission(ctx)
			a.Created = first
			return a, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(id string) error {
			if r.redrive == nil || r.redrive.id != id {
				return pipeline.RefuseAs(pipeline.ErrRedriveConflict, fmt.Sprintf("task %s is running (status %s)", r.in.TaskID, r.state.Status))
			}
			return nil
		}})
	if err != nil {
		return fmt.Errorf("register %s update: %w", UpdateRedrive, err)
	}
	err = workflow.SetQueryHandler(ctx, QueryRedrive, func() (RedriveState, error) {
		var st RedriveState
		if r.redrive == nil {
			return st, nil
		}
		st.RedriveID, st.Refusal = r.redrive.id, r.adm.refusal
		if r.redrive.res != nil {
			st.Admission = r.redriveAdmission(ctx)
		}
		return st, nil
	})
	if err != nil {
		return fmt.Errorf("register %s query: %w", QueryRedrive, err)
	}
	return nil
}

func (r *run) redriveAdmission(ctx workflow.Context) *RedriveAdmission {
	return &RedriveAdmission{TaskID: r.in.TaskID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, RedriveID: r.redrive.id,
		RedriveCount: r.redrive.count(), FromStep: r.redrive.fromStep(), Status: r.state.Status}
}

// admitRedrive runs the redrive admission (PipelineRedriveTask) in place of admit. A refusal ends
// the run with the refusal's error and leaves the task as it was; otherwise the run continues
// from the step it names, with the earlier steps' outputs.
func (r *run) admitRedrive(ctx workflow.Context) (*Result, error) {
	// The task was created by an earlier run: a repeated create request is not its first answer.
	r.adm.answered = true
	info := workflow.GetInfo(ctx)
	var a *pipelineact.Activities
	var res pipeline.RedriveResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, bookkeepingOptions), a.PipelineRedriveTask,
		pipeline.RedriveRequest{TaskID: r.in.TaskID, RunID: info.WorkflowExecution.RunID, RedriveID: r.redrive.id,
			BulkID: r.in.Redrive.BulkID}).Get(ctx, &res)
	if f := refusalOf(err); f != nil {
		r.adm.refusal = f
		r.state.Status, r.state.ErrorReason = statusRefused, f.Message
		r.upsertStatus(ctx, pipeline.StatusFailed)
		return nil, f.Error()
	}
	if err != nil {
		return nil, err
	}
	r.redrive.res = &res
	r.adm.result = &Admission{TaskID: r.in.TaskID, WorkflowID: info.WorkflowExecution.ID, Pipeline: res.Pipeline, Version: res.Version}
	r.schema, r.outputs = res.Schema, res.Outputs
	r.state.Status = pipeline.StatusProcessing
	r.state.StepStatus = make([]string, len(res.Schema.Steps))
	for i := range r.state.StepStatus {
		r.state.StepStatus[i] = pipeline.StatusPending
		if i < res.FromStep {
			r.state.StepStatus[i] = pipeline.StatusSuccess
		}
	}
	r.log.Info("pipeline redriven", "redrive_id", r.redrive.id, "from_step", res.FromStep, "redrive_count", res.Count)
	return nil, nil
}
