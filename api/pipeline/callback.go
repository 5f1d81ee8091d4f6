package pipeline

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/pipeline"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// maxCallbackBody bounds a callback body (it carries URLs, not media).
const maxCallbackBody = 1 << 20

type callbackBody struct {
	Status       string  `json:"status"`
	Output       any     `json:"output"`
	ErrorMessage *string `json:"error_message"`
}

// callback is POST /api/internal/tasks/{taskId}/steps/{stepIndex}/callback: verify the
// signature (401) and the body (400) here, then deliver it to the task's workflow with the
// step-callback update, whose validator answers: 200 accepted, 404 no such task or step, 409 for a
// step that is not waiting, a step the pipeline has left, or a second callback.
func (h *handlers) callback(c echo.Context) error {
	taskID, stepParam := c.Param("taskId"), c.Param("stepIndex")
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxCallbackBody+1))
	if err != nil {
		return httpx.Validation("body", "cannot read the request body: "+err.Error())
	}
	if len(body) > maxCallbackBody {
		return httpx.New(http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "callback body exceeds 1 MiB")
	}
	hdr := c.Request().Header
	if err := h.verifier.Verify(pipeline.CallbackRequest{TaskID: taskID, StepIndex: stepParam, Timestamp: hdr.Get(pipeline.HeaderTimestamp),
		Signature: hdr.Get(pipeline.HeaderSignature), Signature256: hdr.Get(pipeline.HeaderSignature256), Body: body}); err != nil {
		return httpx.New(http.StatusUnauthorized, "INVALID_SIGNATURE", err.Error())
	}
	stepIndex, err := strconv.Atoi(stepParam)
	if err != nil || stepIndex < 0 || !pipeline.ValidTaskID(taskID) {
		return httpx.NotFound("step " + stepParam + " of task " + taskID)
	}
	var cb callbackBody
	if err := httpx.Decode(body, &cb); err != nil {
		return err
	}
	if cb.Status != pipeline.StatusSuccess && cb.Status != pipeline.StatusFailed {
		return httpx.Validation("status", `status must be "success" or "failed"`)
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return httpx.Validation("body", "callback body must be a JSON object")
	}
	d := pipeline.CallbackDelivery{StepIndex: stepIndex, Status: cb.Status, Body: raw}
	if cb.ErrorMessage != nil {
		d.ErrorMessage = *cb.ErrorMessage
	}
	if err := h.workflows.DeliverCallback(c.Request().Context(), taskID, d); err != nil {
		return callbackError(err, taskID)
	}
	return c.JSON(http.StatusOK, map[string]any{"accepted": true, "task_id": taskID, "step_index": stepIndex})
}

// callbackError maps the workflow's refusals (pipeline.Refusals: no such step → 404, a refused
// delivery → 409), a closed workflow (409) and no task (404).
func callbackError(err error, taskID string) error {
	var re *pipeline.RefusalError
	if errors.As(err, &re) {
		e, _ := refusalAnswer(re)
		return e
	}
	switch {
	case errors.Is(err, pipelinewf.ErrNotRunning):
		return httpx.Conflict("task " + taskID + " is no longer running")
	case errors.Is(err, pipeline.ErrNotFound):
		return httpx.NotFound("task " + taskID)
	}
	return httpx.FromTemporal(err)
}
