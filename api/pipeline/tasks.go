package pipeline

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	domain "github.com/taskloom/taskloom/internal/pipeline"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

type createTaskRequest struct {
	Pipeline  string         `json:"pipeline" validate:"required,max=100"`
	Version   string         `json:"version" validate:"max=20"`
	UserID    string         `json:"user_id" validate:"required,max=100"`
	FeatureID string         `json:"feature_id" validate:"required,max=100"`
	InputData map[string]any `json:"input_data"`
}

// taskView is GET /api/v1/pipeline-tasks/{id}: the task with every task_steps row.
type taskView struct {
	*domain.Task
	Steps []domain.StepRecord `json:"steps"`
}

// createTask starts a pipeline run: 201 with the task id, 400 naming an input_data field the
// schema needs, 404 for an unknown pipeline or version, 402 QUOTA_EXHAUSTED when the user has no
// unit left for the feature.
func (h *handlers) createTask(c echo.Context) error {
	var req createTaskRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	task, err := h.starter.Start(c.Request().Context(), pipelinewf.StartRequest{Pipeline: req.Pipeline, Version: req.Version,
		UserID: req.UserID, FeatureID: req.FeatureID, InputData: req.InputData})
	var inputErr *domain.InputError
	switch {
	case errors.As(err, &inputErr):
		return httpx.Validation(inputErr.Field, inputErr.Error())
	case errors.Is(err, domain.ErrNotFound):
		return httpx.NotFound(fmt.Sprintf("pipeline %s version %s", req.Pipeline, orLatest(req.Version)))
	case errors.Is(err, domain.ErrQuotaExhausted):
		return errQuotaExhausted(err.Error())
	case err != nil:
		if te := httpx.FromTemporal(err); te != err {
			return te
		}
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusCreated, map[string]any{"task_id": task.ID, "status": domain.StatusPending,
		"workflow_id": task.WorkflowID, "pipeline": task.Pipeline, "version": task.Version})
}

func (h *handlers) getTask(c echo.Context) error {
	ctx := c.Request().Context()
	task, err := h.store.GetTask(ctx, c.Param("id"))
	if errors.Is(err, domain.ErrNotFound) {
		return httpx.NotFound("pipeline task " + c.Param("id"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	steps, err := h.store.ListSteps(ctx, task.ID)
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, taskView{Task: task, Steps: nonNil(steps)})
}

func orLatest(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}
