package pipeline

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	domain "github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// StartRequest asks for one pipeline run.
type StartRequest struct {
	Pipeline  string
	Version   string // empty: the latest published version
	UserID    string
	FeatureID string
	InputData map[string]any
}

// Starter creates tasks and starts their workflows; the API and the starter CLI share it.
type Starter struct {
	Store     *domain.Store
	Temporal  client.Client
	TaskQueue string
}

// Start consumes one quota unit, records the task and its pending steps, and starts
// PipelineWorkflow (ID pipeline-{taskId}) with a snapshot of the schema version. Errors:
// domain.ErrNotFound (no such pipeline), *domain.InputError (input_data lacks a field the schema
// reads), domain.ErrQuotaExhausted, store and Temporal errors (the quota is given back when the
// task could not start).
func (s *Starter) Start(ctx context.Context, req StartRequest) (*domain.Task, error) {
	if req.InputData == nil {
		req.InputData = map[string]any{}
	}
	rec, err := s.Store.GetSchema(ctx, req.Pipeline, req.Version)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckInput(&rec.Schema, req.InputData); err != nil {
		return nil, err
	}
	task := &domain.Task{ID: domain.NewTaskID(), UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: rec.Name,
		Version: rec.Version, InputData: req.InputData, EligibleForRefund: rec.Schema.RefundsOnFailure()}
	if err := s.Store.ConsumeQuota(ctx, req.UserID, req.FeatureID, task.ID); err != nil {
		return nil, err
	}
	if err := s.Store.CreateTask(ctx, task); err != nil {
		s.undo(task, "could not record the task")
		return nil, err
	}
	if err := s.Store.CreateSteps(ctx, task.ID, rec.Schema.Steps); err != nil {
		s.undo(task, "could not record the steps")
		return nil, err
	}
	opts := client.StartWorkflowOptions{
		ID:                                       domain.WorkflowID(task.ID),
		TaskQueue:                                s.TaskQueue,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(domain.StatusPending), searchattr.PipelineName.ValueSet(rec.Name)),
	}
	_, err = s.Temporal.ExecuteWorkflow(ctx, opts, PipelineWorkflow, Input{TaskID: task.ID, UserID: task.UserID,
		FeatureID: task.FeatureID, Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema, InputData: task.InputData})
	if err != nil {
		s.undo(task, "could not start the workflow")
		return nil, fmt.Errorf("start %s: %w", opts.ID, err)
	}
	return task, nil
}

// undo fails a task that never started and gives its unit back, detached from the caller's
// context so a client disconnect cannot leave the quota consumed.
func (s *Starter) undo(task *domain.Task, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Store.FinishTask(ctx, task.ID, domain.StatusFailed, reason)
	if _, err := s.Store.RefundQuota(ctx, task.UserID, task.FeatureID, task.ID); err == nil {
		_ = s.Store.MarkRefunded(ctx, task.ID)
	}
}
