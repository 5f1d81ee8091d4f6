package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/waiting"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

type createTaskRequest struct {
	Pipeline  string         `json:"pipeline" validate:"required,max=100"`
	Version   string         `json:"version" validate:"max=20"`
	UserID    string         `json:"user_id" validate:"required,max=100"`
	FeatureID string         `json:"feature_id" validate:"required,max=100"`
	InputData map[string]any `json:"input_data"`
}

// taskView is GET /api/v1/pipeline-tasks/{id}: the task with every task_steps row, and, while
// it runs, what it waits for (docs/operations.md "What each execution shows").
type taskView struct {
	*pipeline.Task
	Steps      []pipeline.StepRecord `json:"steps"`
	WaitingFor *waiting.For          `json:"waiting_for,omitempty"`
}

// admissionWait bounds how long task creation waits for the workflow's admission. Admission is
// three MongoDB commands; a wait this long means the workers are down or far behind, and the
// caller is better told so (503, retry with the same Idempotency-Key) than left hanging.
const admissionWait = 30 * time.Second

// createTask starts a pipeline run: 201 with the task, 200 with the same task for a repeated
// Idempotency-Key and body, 409 for the key with a different body, 400 naming an input_data field
// the schema needs, 404 for an unknown pipeline or version, 402 QUOTA_EXHAUSTED when the user has
// no unit left for the feature. The answer comes from the workflow (Update-With-Start).
func (h *handlers) createTask(c echo.Context) error {
	var req createTaskRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	start := pipelinewf.StartRequest{TaskRequest: pipeline.TaskRequest{Pipeline: req.Pipeline, Version: req.Version,
		UserID: req.UserID, FeatureID: req.FeatureID, InputData: req.InputData}}
	key, err := httpx.IdempotencyKey(c)
	if err != nil {
		return err
	}
	// The key becomes the task id, so a retry on any API replica finds the same workflow. Without
	// one the id is fixed here, so a request that is not answered in time can still name it.
	start.TaskID = pipeline.NewTaskID()
	if key != "" {
		start.TaskID = pipeline.TaskIDForKey(auth.From(c).KeyID, key)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), admissionWait)
	defer cancel()
	adm, err := h.workflows.Start(ctx, start)
	if errors.Is(err, pipelinewf.ErrNotAdmittedInTime) || (err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		return notAdmitted(start.TaskID)
	}
	if err != nil {
		return startError(err)
	}
	status := http.StatusOK // an earlier request with the same Idempotency-Key created it
	if adm.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{"task_id": adm.TaskID, "status": adm.Status,
		"workflow_id": adm.WorkflowID, "pipeline": adm.Pipeline, "version": adm.Version})
}

// notAdmitted is the 503 of a creation Temporal did not answer in time or refused for load. Its
// workflow may have started and then admits the task in full (never half of it): a retry with
// the same Idempotency-Key answers that task, and task_id names it for a caller that sent none.
func notAdmitted(taskID string) error {
	e := httpx.Unavailable("pipeline workers", httpx.TemporalRetryAfter)
	e.Message = fmt.Sprintf("the task was not admitted within %s (Temporal is overloaded or no worker runs); "+
		"retry with the same Idempotency-Key", admissionWait)
	return e.WithDetail("task_id", taskID)
}

func startError(err error) error {
	if e, ok := refusalAnswer(err); ok {
		return e
	}
	return httpx.FromTemporal(err)
}

// getTask answers the task as recorded; a task whose record is not final is checked against its
// execution (reconcile on read), so one terminated from outside answers terminated at once.
func (h *handlers) getTask(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	task, err := h.store.Follow(ctx, id, func(ctx context.Context) (*closure.Closure, error) { return h.workflows.Closure(ctx, id) })
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("pipeline task " + c.Param("id"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	steps, err := h.store.StepsOf(ctx, task)
	if err != nil {
		return httpx.FromStore(err)
	}
	v := taskView{Task: task, Steps: nonNil(steps)}
	if task.Status == pipeline.StatusPending || task.Status == pipeline.StatusProcessing {
		// The workflow knows what it waits for; an answer without it is still the task.
		if v.WaitingFor, err = h.workflows.WaitingFor(ctx, task.ID); err != nil {
			h.log.Warn("waiting_for unknown", "task_id", task.ID, "err", err)
		}
	}
	return c.JSON(http.StatusOK, v)
}
