package pipeline

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// StartRequest asks for one pipeline task.
type StartRequest struct {
	// TaskID fixes the task (and workflow) id, e.g. pipeline.TaskIDForKey of an Idempotency-Key;
	// empty: a fresh one.
	TaskID string
	pipeline.TaskRequest
}

// ErrIdempotencyConflict: the task id (idempotency key) is taken by a different request.
var ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")

// Starter creates pipeline tasks; the API and the starter CLI share it.
type Starter struct {
	Temporal  client.Client
	TaskQueue string
}

// Start starts PipelineWorkflow (ID pipeline-{taskId}) and waits for its admission with
// Update-With-Start: nothing is written before the workflow exists, and the workflow's own
// activity writes the task, its steps and the quota charge. Repeating a request with the same
// TaskID answers the same admission (also after the workflow has finished); a different request
// under it fails with ErrIdempotencyConflict. Other errors: pipeline.ErrNotFound (no such pipeline
// or version), *pipeline.InputError (input_data lacks a field the schema reads),
// pipeline.ErrQuotaExhausted, Temporal errors.
func (s *Starter) Start(ctx context.Context, req StartRequest) (*Admission, error) {
	if req.InputData == nil {
		req.InputData = map[string]any{}
	}
	if req.TaskID == "" {
		req.TaskID = pipeline.NewTaskID()
	}
	hash, err := req.Hash()
	if err != nil {
		return nil, err
	}
	id := pipeline.WorkflowID(req.TaskID)
	op := s.Temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: s.TaskQueue,
		// A running workflow answers the update. After a run that failed (refused, or its pipeline
		// failed) a new run may start: it admits afresh when nothing was admitted, and adopts the
		// earlier task otherwise (AdmitTask). A successful run is final; a late retry is answered
		// from its admission query below.
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(pipeline.StatusPending), searchattr.PipelineName.ValueSet(req.Pipeline)),
	}, PipelineWorkflow, Input{TaskID: req.TaskID, UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: req.Pipeline,
		Version: req.Version, InputData: req.InputData, RequestHash: hash})
	h, err := s.Temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{
			// Every request is its own update (the SDK names it), so the workflow can tell the
			// first answer (Created) from a repeated request's.
			UpdateName:   UpdateAdmission,
			Args:         []any{hash},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var adm Admission
	if err == nil {
		err = h.Get(ctx, &adm)
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return s.finished(ctx, id, hash)
	}
	if err != nil {
		return nil, asStartError(err, id)
	}
	return &adm, nil
}

// finished answers a request whose workflow has closed, from its admission query.
func (s *Starter) finished(ctx context.Context, id, hash string) (*Admission, error) {
	v, err := s.Temporal.QueryWorkflow(ctx, id, "", QueryAdmission)
	if err != nil {
		return nil, fmt.Errorf("query admission of %s: %w", id, err)
	}
	var st AdmissionState
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode admission of %s: %w", id, err)
	}
	switch {
	case st.RequestHash != hash:
		return nil, fmt.Errorf("%s: %w", id, ErrIdempotencyConflict)
	case st.Refusal != nil:
		return nil, asStartError(st.Refusal.Error(), id)
	case st.Admission == nil:
		return nil, fmt.Errorf("%s closed before its admission", id)
	}
	return st.Admission, nil
}

// asStartError maps the admission's refusals to the domain's errors.
func asStartError(err error, id string) error {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return fmt.Errorf("start %s: %w", id, err)
	}
	switch ae.Type() {
	case pipeline.ErrTypeIdempotencyConflict:
		return fmt.Errorf("%s: %w", id, ErrIdempotencyConflict)
	case pipeline.ErrTypeUnknownPipeline:
		return fmt.Errorf("%s: %w", ae.Message(), pipeline.ErrNotFound)
	case pipeline.ErrTypeQuotaExhausted:
		return fmt.Errorf("%s: %w", ae.Message(), pipeline.ErrQuotaExhausted)
	case pipeline.ErrTypeInvalidInput:
		var d pipeline.InputRefusal
		if ae.HasDetails() {
			_ = ae.Details(&d)
		}
		return &pipeline.InputError{Field: d.Field, Message: ae.Message()}
	}
	return fmt.Errorf("start %s: %w", id, err)
}
