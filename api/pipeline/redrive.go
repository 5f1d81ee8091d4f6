package pipeline

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/bulkapi"
	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/pipeline"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// redriveView answers a redrive: the task's id, status and redrive count, and this redrive's
// entry of its history.
type redriveView struct {
	TaskID       string            `json:"task_id"`
	WorkflowID   string            `json:"workflow_id"`
	Status       string            `json:"status"`
	RedriveCount int               `json:"redrive_count"`
	Redrive      *pipeline.Redrive `json:"redrive"`
}

// redriveTask continues a failed task from its first step that did not succeed
// (docs/operations.md "Redrive"): 201 with the redrive, 200 for a repeated Idempotency-Key, 404 unknown task, 409 for
// a running or succeeded task, 410 past PIPELINE_REDRIVE_WINDOW, 402 QUOTA_EXHAUSTED when the
// failure refunded the unit and none is left. The checks here answer quickly; the redrive run's
// own activity repeats them under its guards.
func (h *handlers) redriveTask(c echo.Context) error {
	ctx := c.Request().Context()
	task, err := h.store.GetTask(ctx, c.Param("id"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("pipeline task " + c.Param("id"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	redriveID := "req:" + pipeline.NewTaskID()
	key, err := httpx.IdempotencyKey(c)
	if err != nil {
		return err
	}
	if key != "" {
		redriveID = pipeline.RedriveIDForKey(auth.From(c).KeyID, task.ID, key)
	}
	created, err := h.workflows.RedriveTask(ctx, task, redriveID, "", h.redriveWindow)
	switch {
	case err != nil:
		return redriveError(err)
	case created:
		return h.redriveAnswer(c, task.ID, redriveID, http.StatusCreated)
	}
	return h.redriveAnswer(c, task.ID, redriveID, http.StatusOK)
}

func (h *handlers) redriveAnswer(c echo.Context, taskID, redriveID string, status int) error {
	task, err := h.store.GetTask(c.Request().Context(), taskID)
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(status, redriveView{TaskID: task.ID, WorkflowID: task.WorkflowID, Status: task.Status,
		RedriveCount: task.RedriveCount, Redrive: task.RedriveOf(redriveID)})
}

func redriveError(err error) error {
	if e, ok := refusalAnswer(err); ok {
		return e
	}
	return httpx.FromTemporal(err)
}

// bulkRedriveRoute is POST /api/v1/pipeline-tasks/redrive (redrive every failed task of a
// filter within PIPELINE_REDRIVE_WINDOW) and GET /api/v1/pipeline-tasks/redrive/{bulk_id} (its
// progress), as bulkapi.Route serves every bulk operation.
func bulkRedriveRoute(wf *pipelinewf.Client, count pipelinewf.RedriveCount, window time.Duration) *bulkapi.Route[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome] {
	return &bulkapi.Route[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome]{
		Plan: wf.BulkRedrivePlan(count, window), Path: "/api/v1/pipeline-tasks/redrive", Snake: true, Applied: "redriven",
		Body: func() bulkapi.Body[pipeline.RedriveFilter, struct{}] { return new(bulkRedriveRequest) },
	}
}

// bulkRedriveRequest is POST /api/v1/pipeline-tasks/redrive. The times are RFC 3339.
type bulkRedriveRequest struct {
	Filter struct {
		Pipeline    string `json:"pipeline" validate:"max=100"`
		Version     string `json:"version" validate:"max=20"`
		UserID      string `json:"user_id" validate:"max=100"`
		Provider    string `json:"provider" validate:"max=100"`
		FailedSince string `json:"failed_since"`
		FailedUntil string `json:"failed_until"`
		Error       string `json:"error" validate:"max=200"`
	} `json:"filter"`
	DryRun bool `json:"dry_run"`
	// RatePerSecond bounds how many tasks the operation redrives per second.
	RatePerSecond int `json:"rate_per_second" validate:"omitempty,min=1,max=100"`
}

// Request is the body as a bulk request.
func (r *bulkRedriveRequest) Request(echo.Context) (bulkapi.Request[pipeline.RedriveFilter, struct{}], error) {
	f := pipeline.RedriveFilter{Pipeline: r.Filter.Pipeline, Version: r.Filter.Version, UserID: r.Filter.UserID,
		Provider: r.Filter.Provider, Error: r.Filter.Error}
	var err error
	f.FailedSince, f.FailedUntil, err = httpx.TimeRange("filter.failed_since", r.Filter.FailedSince, "filter.failed_until", r.Filter.FailedUntil)
	return bulkapi.Request[pipeline.RedriveFilter, struct{}]{Filter: f, DryRun: r.DryRun, Rate: r.RatePerSecond}, err
}
