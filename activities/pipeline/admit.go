package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// PipelineAdmitTask is the first thing PipelineWorkflow does: resolve the pipeline version, check
// the input against it, record the task with its plan of steps (each step writes its own row when
// it runs; pipeline.PlannedSteps shows the others pending), charge one quota unit. Three Mongo
// commands, two for a pinned version a worker has read before (published versions never change,
// schemaOf); refusals are the admission kinds of pipeline.Refusals and leave nothing behind.
//
// Idempotent, for activity retries after a crash between any two writes: the task insert decides
// (an existing task of this run means "carry on", of an earlier run means "adopt it and charge
// nothing", or a conflict when that run had a different request); the charge is guarded by the
// quota's open_tasks; a refused task is deleted only by the run that wrote it.
func (a *Activities) PipelineAdmitTask(ctx context.Context, req pipeline.AdmitRequest) (*pipeline.AdmitResult, error) {
	// An input the store can never record is refused before any read or write: retrying it would
	// fail the same way for ever while the creating request waits.
	if err := pipeline.CheckInputShape(req.InputData); err != nil {
		return nil, invalidInput(err)
	}
	rec, err := a.schemaOf(ctx, req.Pipeline, req.Version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, pipeline.RefuseAs(pipeline.ErrNotFound, fmt.Sprintf("pipeline %s version %s not found", req.Pipeline, pipeline.VersionLabel(req.Version)))
	}
	if err != nil {
		return nil, err
	}
	if err := pipeline.CheckInput(&rec.Schema, req.InputData); err != nil {
		return nil, invalidInput(err)
	}
	res := &pipeline.AdmitResult{Pipeline: rec.Name, Version: rec.Version, Schema: rec.Schema, EligibleForRefund: rec.Schema.RefundsOnFailure()}
	task := &pipeline.Task{ID: req.TaskID, UserID: req.UserID, FeatureID: req.FeatureID, Pipeline: rec.Name, Version: rec.Version,
		InputData: req.InputData, EligibleForRefund: res.EligibleForRefund, RunID: req.RunID, RequestHash: req.RequestHash,
		Plan: pipeline.PlanOf(rec.Schema.Steps)}
	existing, err := a.Store.InsertTask(ctx, task)
	if err != nil {
		return nil, err
	}
	if existing != nil && existing.RunID != req.RunID {
		if existing.RequestHash != req.RequestHash {
			return nil, pipeline.RefuseAs(pipeline.ErrIdempotencyConflict, fmt.Sprintf("task %s was created by a different request", req.TaskID))
		}
		res.Earlier = existing
		return res, nil
	}
	if err := a.Store.ConsumeQuota(ctx, req.UserID, req.FeatureID, req.TaskID); err != nil {
		if !errors.Is(err, pipeline.ErrQuotaExhausted) {
			return nil, err
		}
		if err := a.Store.DeleteTask(ctx, req.TaskID, req.RunID); err != nil {
			return nil, err
		}
		return nil, pipeline.Refuse(err)
	}
	return res, nil
}

// invalidInput is the ErrInvalidInput refusal of err, naming its input_data field.
func invalidInput(err error) error {
	field := "input_data"
	var ie *pipeline.InputError
	if errors.As(err, &ie) {
		field = ie.Field
	}
	return pipeline.RefuseAs(pipeline.ErrInvalidInput, err.Error(), pipeline.InputRefusal{Field: field})
}

// schemaOf loads a pipeline version. A published version is immutable, so a pinned one is read
// once per worker and kept; the latest (version "") is read every time, since a newer version may
// have been published.
func (a *Activities) schemaOf(ctx context.Context, name, version string) (*pipeline.SchemaRecord, error) {
	key := name + "@" + version
	if version != "" {
		if rec, ok := a.schemas.Load(key); ok {
			return rec.(*pipeline.SchemaRecord), nil
		}
	}
	rec, err := a.Store.GetSchema(ctx, name, version)
	if err != nil {
		return nil, err
	}
	a.schemas.Store(rec.Name+"@"+rec.Version, rec)
	return rec, nil
}
