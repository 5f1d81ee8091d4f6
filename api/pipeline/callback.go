package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/api/serviceerror"

	"github.com/taskloom/taskloom/api/httpx"
	domain "github.com/taskloom/taskloom/internal/pipeline"
)

// maxCallbackBody bounds a callback body (it carries URLs, not media).
const maxCallbackBody = 1 << 20

type callbackBody struct {
	Status       string  `json:"status"`
	Output       any     `json:"output"`
	ErrorMessage *string `json:"error_message"`
}

// callback is the seed's POST /api/internal/tasks/{taskId}/steps/{stepIndex}/callback: verify the
// signature (401), find the step (404), accept only the first callback of a waiting step (409),
// then signal the workflow.
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
	if err := h.verifier.Verify(domain.CallbackRequest{TaskID: taskID, StepIndex: stepParam, Timestamp: hdr.Get(domain.HeaderTimestamp),
		Signature: hdr.Get(domain.HeaderSignature), Signature256: hdr.Get(domain.HeaderSignature256), Body: body}); err != nil {
		return httpx.New(http.StatusUnauthorized, "INVALID_SIGNATURE", err.Error())
	}
	stepIndex, err := strconv.Atoi(stepParam)
	if err != nil || stepIndex < 0 {
		return httpx.NotFound("step " + stepParam + " of task " + taskID)
	}
	var cb callbackBody
	if err := httpx.Decode(body, &cb); err != nil {
		return err
	}
	if cb.Status != domain.StatusSuccess && cb.Status != domain.StatusFailed {
		return httpx.Validation("status", `status must be "success" or "failed"`)
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return httpx.Validation("body", "callback body must be a JSON object")
	}
	ctx := c.Request().Context()
	claimed, err := h.store.ClaimCallback(ctx, taskID, stepIndex)
	if errors.Is(err, domain.ErrNotFound) {
		return httpx.NotFound("step " + stepParam + " of task " + taskID)
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	if !claimed {
		return httpx.Conflict("step " + stepParam + " of task " + taskID + " is not waiting for a callback (already called back, finished or not started)")
	}
	sig := domain.CallbackSignal{StepIndex: stepIndex, Status: cb.Status, Body: raw}
	if cb.ErrorMessage != nil {
		sig.ErrorMessage = *cb.ErrorMessage
	}
	if err := h.temporal.SignalWorkflow(ctx, domain.WorkflowID(taskID), "", domain.SignalStepCallback, sig); err != nil {
		h.release(taskID, stepIndex)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return httpx.Conflict("task " + taskID + " is no longer running")
		}
		return httpx.FromTemporal(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"accepted": true, "task_id": taskID, "step_index": stepIndex})
}

// release reopens a claimed callback that could not be delivered, detached from the request.
func (h *handlers) release(taskID string, stepIndex int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.store.ReleaseCallback(ctx, taskID, stepIndex)
}
