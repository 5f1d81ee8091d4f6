package pipeline

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

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

// bulkSample bounds the task ids a dry run lists.
const bulkSample = 20

func (r *bulkRedriveRequest) filter() (pipeline.RedriveFilter, error) {
	f := pipeline.RedriveFilter{Pipeline: r.Filter.Pipeline, Version: r.Filter.Version, UserID: r.Filter.UserID,
		Provider: r.Filter.Provider, Error: r.Filter.Error}
	var err error
	f.FailedSince, f.FailedUntil, err = httpx.TimeRange("filter.failed_since", r.Filter.FailedSince, "filter.failed_until", r.Filter.FailedUntil)
	return f, err
}

// redriveBulk redrives the failed tasks of a filter (docs/operations.md "Redrive"). With dry_run: 200 with
// the count and a sample of task ids. Without: 202 with the bulk operation's id; the operation
// (a workflow whose ID comes from the Idempotency-Key, so a repeated request is answered with
// the same operation and redrives nothing twice) works at rate_per_second and reports its
// progress at GET /api/v1/pipeline-tasks/redrive/{bulk_id}. 409 for the key with another filter.
func (h *handlers) redriveBulk(c echo.Context) error {
	var req bulkRedriveRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	requested, err := req.filter()
	if err != nil {
		return err
	}
	bulkID := pipeline.NewTaskID()
	key, err := httpx.IdempotencyKey(c)
	if err != nil {
		return err
	}
	if key != "" {
		bulkID = pipeline.BulkIDForKey(auth.From(c).KeyID, key)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	applied := requested.Within(now, h.redriveWindow, now)
	ctx := c.Request().Context()
	if !req.DryRun {
		if p, err := h.workflows.BulkProgress(ctx, bulkID); err == nil {
			return h.bulkStarted(c, bulkID, p.Total, false, requested, p.Requested)
		}
	}
	n, sample, err := h.store.CountRedrivable(ctx, applied, bulkSample)
	if err != nil {
		return httpx.FromStore(err)
	}
	if req.DryRun {
		return c.JSON(http.StatusOK, map[string]any{"dry_run": true, "count": n, "sample": nonNil(sample), "filter": applied})
	}
	rate := req.RatePerSecond
	if rate == 0 {
		rate = pipelinewf.DefaultBulkBatchSize
	}
	started, err := h.workflows.StartBulkRedrive(ctx, pipelinewf.BulkInput{ID: bulkID, Requested: requested, Filter: applied,
		BatchSize: rate, Interval: pipelinewf.DefaultBulkInterval, Progress: pipelinewf.BulkProgress{Total: n}})
	if errors.Is(err, pipelinewf.ErrBulkConflict) {
		return bulkConflict()
	}
	if err != nil {
		return httpx.FromTemporal(err)
	}
	return h.bulkStarted(c, bulkID, n, started, requested, requested)
}

func bulkConflict() error {
	return httpx.New(http.StatusConflict, "IDEMPOTENCY_CONFLICT",
		"this Idempotency-Key was used for a bulk redrive with a different filter; use a new key for a new operation")
}

// bulkStarted answers a bulk redrive that runs (or ran): 202 when this request started it, 200
// for a repeated one.
func (h *handlers) bulkStarted(c echo.Context, bulkID string, total int64, started bool, requested, existing pipeline.RedriveFilter) error {
	if !pipelinewf.SameFilter(requested, existing) {
		return bulkConflict()
	}
	status := http.StatusOK
	if started {
		status = http.StatusAccepted
	}
	return c.JSON(status, map[string]any{"bulk_id": bulkID, "workflow_id": pipelinewf.BulkWorkflowID(bulkID), "count": total,
		"started": started, "progress_url": "/api/v1/pipeline-tasks/redrive/" + bulkID})
}

// bulkProgress answers a bulk redrive's progress and, once it finished, every task's outcome.
func (h *handlers) bulkProgress(c echo.Context) error {
	// Bulk ids have the shape of task ids (NewTaskID, BulkIDForKey); anything else is unknown.
	if !pipeline.ValidTaskID(c.Param("bulk_id")) {
		return httpx.NotFound("bulk redrive " + c.Param("bulk_id"))
	}
	p, err := h.workflows.BulkProgress(c.Request().Context(), c.Param("bulk_id"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("bulk redrive " + c.Param("bulk_id"))
	}
	if err != nil {
		return httpx.FromTemporal(err)
	}
	return c.JSON(http.StatusOK, bulkProgressView(p))
}

// bulkProgressView is the JSON of a bulk redrive's progress.
func bulkProgressView(p *pipelinewf.BulkProgress) map[string]any {
	return map[string]any{"bulk_id": p.ID, "total": p.Total, "done": p.Done, "redriven": p.Redriven, "skipped": p.Skipped,
		"errors": p.Errors, "finished": p.Finished, "filter": p.Requested, "outcomes": nonNil(p.Outcomes)}
}
