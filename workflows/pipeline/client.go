package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/waiting"
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

// Start starts PipelineWorkflow (ID pipeline-{taskId}) and waits for its admission with
// Update-With-Start: nothing is written before the workflow exists, and the workflow's own
// activity writes the task, its steps and the quota charge. Repeating a request with the same
// TaskID answers the same admission (also after the workflow has finished); a different request
// under it fails with pipeline.ErrIdempotencyConflict. A refusal is a *pipeline.RefusalError
// wrapping its sentinel: pipeline.ErrNotFound (no such pipeline or version), ErrInvalidInput
// (input_data lacks a field the schema reads; Field names it), ErrQuotaExhausted. A request
// Temporal did not answer in time or refused for load fails with ErrNotAdmittedInTime; retried
// with the same TaskID it reaches the same task. Other errors are Temporal's.
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
	in := Input{TaskID: req.TaskID, UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: req.Pipeline,
		Version: req.Version, InputData: req.InputData, RequestHash: hash}
	// A running workflow answers the update. After a run that failed (refused, or its pipeline
	// failed) a new run may start: it admits afresh when nothing was admitted, and adopts the
	// earlier task otherwise (PipelineAdmitTask). A successful run is final; a late retry is
	// answered from its admission query below.
	op := c.Temporal.NewWithStartWorkflowOperation(
		c.startOptions(in, enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY), PipelineWorkflow, in)
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
	if err != nil && notAnsweredInTime(err) {
		return nil, fmt.Errorf("start %s: %w: %w", id, ErrNotAdmittedInTime, err)
	}
	if err != nil {
		return nil, refusalOr(err, "start %s", id)
	}
	return &adm, nil
}

// finished answers a request whose workflow has closed, from its admission query.
func (c *Client) finished(ctx context.Context, id, hash string) (*Admission, error) {
	v, err := c.Temporal.QueryWorkflow(ctx, id, "", QueryAdmission)
	if err != nil && (notAnsweredInTime(err) || noWorkerPolling(err)) {
		// A retry of a creation that was not answered in time, after its workflow closed, under a
		// load that keeps every worker slot busy: the answer is there, only not readable now.
		return nil, fmt.Errorf("query admission of %s: %w: %w", id, ErrNotAdmittedInTime, err)
	}
	if err != nil {
		return nil, fmt.Errorf("query admission of %s: %w", id, err)
	}
	var st AdmissionState
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode admission of %s: %w", id, err)
	}
	switch {
	case st.RequestHash != hash:
		return nil, fmt.Errorf("%s: %w", id, pipeline.ErrIdempotencyConflict)
	case st.Refusal != nil:
		return nil, refusalOr(st.Refusal.Error(), "start %s", id)
	case st.Admission == nil:
		return nil, fmt.Errorf("%s closed before its admission", id)
	}
	return st.Admission, nil
}

// refusalOr is the refusal (of pipeline.Refusals) err carries, with its sentinel, or err wrapped
// with what was asked.
func refusalOr(err error, format string, args ...any) error {
	if re := pipeline.AsRefusal(err); re != nil {
		return re
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// ErrNotRunning: the task's workflow has closed, so it takes no more callbacks.
var ErrNotRunning = errors.New("the task's workflow is no longer running")

// DeliverCallback sends a verified SCF callback to the task's workflow with the step-callback
// update (UpdateStepCallback) and waits until the workflow has accepted or refused it. A refusal
// is the validator's, as a *pipeline.RefusalError (pipeline.ErrStepNotFound, ErrCallbackStale,
// ErrStepNotWaiting, ErrCallbackDelivered). Temporal answers
// NotFound both for no such workflow and for a closed one; Describe tells them apart:
// ErrNotRunning for a closed one, pipeline.ErrNotFound for none. Other errors (a
// describe that failed too among them) are Temporal's.
func (c *Client) DeliverCallback(ctx context.Context, taskID string, d pipeline.CallbackDelivery) error {
	id := WorkflowID(taskID)
	u, err := c.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id,
		UpdateName: UpdateStepCallback, Args: []any{d}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = u.Get(ctx, nil)
	}
	if re := pipeline.AsRefusal(err); re != nil {
		return re
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return err
	}
	_, derr := c.Temporal.DescribeWorkflowExecution(ctx, id, "")
	if derr == nil {
		return fmt.Errorf("task %s: %w", taskID, ErrNotRunning)
	}
	if errors.As(derr, &nf) {
		return fmt.Errorf("task %s: %w", taskID, pipeline.ErrNotFound)
	}
	// Temporal could not say whether the workflow exists (unavailable, deadline): the caller
	// answers 503 and the vendor retries the callback, instead of a 404 that ends it for good.
	return fmt.Errorf("task %s: describe after update: %w", taskID, derr)
}

// Wait waits until the task's workflow has closed (or ctx ends) and returns how it ended: nil
// for success, the workflow's error otherwise.
func (c *Client) Wait(ctx context.Context, taskID string) error {
	return c.Temporal.GetWorkflow(ctx, WorkflowID(taskID), "").Get(ctx, nil)
}

// startOptions are the options a task's run starts with, for an admission and a redrive alike;
// they differ only in which earlier run may be followed by a new one (reuse). A running run
// always answers the update itself (conflict policy USE_EXISTING).
func (c *Client) startOptions(in Input, reuse enums.WorkflowIdReusePolicy) client.StartWorkflowOptions {
	summary, details := StartMetadata(in)
	return client.StartWorkflowOptions{
		ID:                       WorkflowID(in.TaskID),
		TaskQueue:                c.TaskQueue,
		StaticSummary:            summary,
		StaticDetails:            details,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(pipeline.StatusPending), searchattr.PipelineName.ValueSet(in.Pipeline)),
		// One fairness key per user: the task queue hands out its backlog in turn over users, so
		// one user's burst does not starve another's tasks. The workflow's activities inherit it
		// on the server, so the workflow code sets nothing (docs/pipelines.md "Fair under load").
		Priority: temporal.Priority{FairnessKey: pipeline.FairnessKey(in.UserID)},
	}
}

// Redrive continues the failed task from its first step that did not succeed, in a new run of
// its workflow (same workflow ID) started with Update-With-Start: the run's own activity checks
// the task, charges its unit again when the failure refunded it, and records the redrive on the
// task. redriveID makes it idempotent: a repeated request with the same id answers the same
// redrive (Created false) while its run runs, and pipeline.ErrRedriveRepeated after. Refusals are
// *pipeline.RefusalError wrapping pipeline.ErrRedriveConflict (the task runs or succeeded),
// ErrRedriveExpired (past the redrive window), ErrQuotaExhausted or ErrRedriveRepeated; other
// errors are Temporal's.
func (c *Client) Redrive(ctx context.Context, task *pipeline.Task, redriveID, bulkID string) (*RedriveAdmission, error) {
	in := Input{TaskID: task.ID, UserID: task.UserID, FeatureID: task.FeatureID, Pipeline: task.Pipeline,
		Version: task.Version, InputData: task.InputData, RequestHash: task.RequestHash,
		Redrive: &RedriveInput{ID: redriveID, BulkID: bulkID}}
	// A running run (the task's, or this redrive's) answers the update itself. Otherwise a new
	// run starts whatever the last one's close status: the task document, not the last run,
	// says whether the task failed (a repeated create request may have closed a run that
	// adopted the failed task as completed), and the redrive run's own activity refuses a
	// task that is not failed.
	op := c.Temporal.NewWithStartWorkflowOperation(
		c.startOptions(in, enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE), PipelineWorkflow, in)
	h, err := c.Temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: UpdateRedrive, Args: []any{redriveID},
			WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	var adm RedriveAdmission
	if err == nil {
		err = h.Get(ctx, &adm)
	}
	if err != nil {
		return nil, refusalOr(err, "redrive task %s", task.ID)
	}
	return &adm, nil
}

// RedriveTask is Redrive for a caller that has just read the task (the API, the CLI, the
// console, the bulk redrive): a redrive id the task records already is answered at once (created false), and
// pipeline.CheckRedrive refuses a task that is not failed or is past window without asking
// Temporal; the redrive run repeats those checks under its guards. A repeated redrive whose run
// has ended counts as done (created false).
func (c *Client) RedriveTask(ctx context.Context, task *pipeline.Task, redriveID, bulkID string, window time.Duration) (created bool, err error) {
	if task.RedriveOf(redriveID) != nil {
		return false, nil
	}
	if err := pipeline.CheckRedrive(task, time.Now(), window); err != nil {
		return false, err
	}
	adm, err := c.Redrive(ctx, task, redriveID, bulkID)
	switch {
	case errors.Is(err, pipeline.ErrRedriveRepeated):
		return false, nil
	case err != nil:
		return false, err
	}
	return adm.Created, nil
}

// WaitingFor asks a running task's workflow what it waits for (the state query), and, when a
// provider call is being retried, when its next attempt starts (the pending activity of the
// workflow's description): one query and one describe, no database read. nil: the workflow
// waits for nothing (it has ended, or is not admitted yet).
func (c *Client) WaitingFor(ctx context.Context, taskID string) (*waiting.For, error) {
	id := WorkflowID(taskID)
	v, err := c.Temporal.QueryWorkflow(ctx, id, "", QueryState)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", id, err)
	}
	var st State
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode state of %s: %w", id, err)
	}
	w := st.WaitingFor
	if w == nil || w.Reason != waiting.Call {
		return w, nil
	}
	d, err := c.Temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", id, err)
	}
	for _, pa := range d.GetPendingActivities() {
		next := pa.GetNextAttemptScheduleTime()
		if pa.GetAttempt() < 2 || next == nil {
			continue
		}
		failure := pa.GetLastFailure().GetMessage()
		return waiting.New(waiting.RetryBackoff, fmt.Sprintf("%s; attempt %d failed: %s", w.Detail, pa.GetAttempt()-1, failure),
			w.Since, next.AsTime()), nil
	}
	return w, nil
}

// Closure is how the task's execution ended when it ended from outside (terminated, timed out,
// canceled), with who and why; nil while it runs or when it ended by itself.
func (c *Client) Closure(ctx context.Context, taskID string) (*closure.Closure, error) {
	d, err := c.Temporal.DescribeWorkflowExecution(ctx, WorkflowID(taskID), "")
	return closure.Of(ctx, c.Temporal, d, err)
}
