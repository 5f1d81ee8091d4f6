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

// The client side of the pipeline workflows: every start, update, query and describe the API and
// the CLI send about a pipeline goes through Client, with the workflow IDs below. Not workflow
// code.

// WorkflowID is the deterministic workflow ID of a task, pipeline-{taskId}: a retry or a double
// click finds the same execution. (internal/pipeline keeps the rule, for the task documents that
// record it.)
func WorkflowID(taskID string) string { return pipeline.WorkflowID(taskID) }

// Client talks to Temporal about pipelines; the API and the starter CLI share it.
type Client struct {
	Temporal client.Client
	// TaskQueue is the configured TEMPORAL_TASK_QUEUE, which the worker polls for every subsystem.
	TaskQueue string
}

// StartRequest asks for one pipeline task.
type StartRequest struct {
	// TaskID fixes the task (and workflow) id, e.g. pipeline.TaskIDForKey of an Idempotency-Key;
	// empty: a fresh one.
	TaskID string
	pipeline.TaskRequest
}

// ErrIdempotencyConflict: the task id (idempotency key) is taken by a different request.
var ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")

// Start starts PipelineWorkflow (ID pipeline-{taskId}) and waits for its admission with
// Update-With-Start: nothing is written before the workflow exists, and the workflow's own
// activity writes the task, its steps and the quota charge. Repeating a request with the same
// TaskID answers the same admission (also after the workflow has finished); a different request
// under it fails with ErrIdempotencyConflict. Other errors: pipeline.ErrNotFound (no such pipeline
// or version), *pipeline.InputError (input_data lacks a field the schema reads),
// pipeline.ErrQuotaExhausted, Temporal errors.
func (c *Client) Start(ctx context.Context, req StartRequest) (*Admission, error) {
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
	id := WorkflowID(req.TaskID)
	op := c.Temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: c.TaskQueue,
		// A running workflow answers the update. After a run that failed (refused, or its pipeline
		// failed) a new run may start: it admits afresh when nothing was admitted, and adopts the
		// earlier task otherwise (PipelineAdmitTask). A successful run is final; a late retry is
		// answered from its admission query below.
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(pipeline.StatusPending), searchattr.PipelineName.ValueSet(req.Pipeline)),
		// One fairness key per user: the task queue hands out its backlog in turn over users, so
		// one user's burst does not starve another's tasks. The workflow's activities inherit it
		// on the server, so the workflow code sets nothing (README "Fair under load").
		Priority: temporal.Priority{FairnessKey: pipeline.FairnessKey(req.UserID)},
	}, PipelineWorkflow, Input{TaskID: req.TaskID, UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: req.Pipeline,
		Version: req.Version, InputData: req.InputData, RequestHash: hash})
	h, err := c.Temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
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
		return c.finished(ctx, id, hash)
	}
	if err != nil {
		return nil, asStartError(err, id)
	}
	return &adm, nil
}

// finished answers a request whose workflow has closed, from its admission query.
func (c *Client) finished(ctx context.Context, id, hash string) (*Admission, error) {
	v, err := c.Temporal.QueryWorkflow(ctx, id, "", QueryAdmission)
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

// ErrNotRunning: the task's workflow has closed, so it takes no more callbacks.
var ErrNotRunning = errors.New("the task's workflow is no longer running")

// DeliverCallback sends a verified SCF callback to the task's workflow with the step-callback
// update (UpdateStepCallback) and waits until the workflow has accepted or refused it. A refusal
// is the validator's *temporal.ApplicationError (pipeline.ErrTypeStepNotFound,
// ErrTypeCallbackStale, ErrTypeStepNotWaiting, ErrTypeCallbackDelivered). Temporal answers
// NotFound both for no such workflow and for a closed one; Describe tells them apart:
// ErrNotRunning for a closed one, pipeline.ErrNotFound otherwise. Other errors are Temporal's.
func (c *Client) DeliverCallback(ctx context.Context, taskID string, d pipeline.CallbackDelivery) error {
	id := WorkflowID(taskID)
	u, err := c.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id,
		UpdateName: UpdateStepCallback, Args: []any{d}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = u.Get(ctx, nil)
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return err
	}
	if _, derr := c.Temporal.DescribeWorkflowExecution(ctx, id, ""); derr == nil {
		return fmt.Errorf("task %s: %w", taskID, ErrNotRunning)
	}
	return fmt.Errorf("task %s: %w", taskID, pipeline.ErrNotFound)
}

// Wait waits until the task's workflow has closed (or ctx ends) and returns how it ended: nil
// for success, the workflow's error otherwise.
func (c *Client) Wait(ctx context.Context, taskID string) error {
	return c.Temporal.GetWorkflow(ctx, WorkflowID(taskID), "").Get(ctx, nil)
}
