package entry

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/entry"
)

// apply is POST /api/workflows/apply: validate the WorkflowApplyRequest, enqueue it and answer
// {taskId, status, retry} (202). With waitForResult it waits up to waitTimeoutSeconds (bounded by
// ENTRY_WAIT_TIMEOUT_MAX) and answers 200 with the result, or 202 with the taskId when time runs
// out; the task keeps running either way.
func (h *handlers) apply(c echo.Context) error {
	body, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	req, err := entry.ParseApplyRequest(body)
	if err != nil {
		return toHTTP(err)
	}
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Source: "http-api", RetryMax: h.cfg.RetryMax,
		Now: h.now(), Window: h.cfg.IdempotencyWindow})
	if env.Context.RequestID == "" {
		env.Context.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
		env.Context.TraceID = env.Context.RequestID
	}
	ctx := c.Request().Context()
	acc, err := h.sub.Submit(ctx, env)
	if err != nil {
		return toHTTP(err)
	}
	if acc.Recorded != nil && entry.Terminal(acc.Recorded.Status) {
		// The task has run: its recorded status is final. (A live query could instead reach an
		// execution started after Temporal's retention forgot the run, before it ends.)
		return c.JSON(http.StatusOK, acc.Recorded)
	}
	if !req.WaitForResult {
		return c.JSON(http.StatusAccepted, acc)
	}
	wctx, cancel := context.WithTimeout(ctx, h.waitTimeout(req.WaitTimeoutSeconds))
	defer cancel()
	done, err := h.tasks.Wait(wctx, acc.TaskID)
	if !done && err == nil {
		return h.answerStatus(c, ctx, acc.TaskID, http.StatusAccepted)
	}
	return h.answerStatus(c, ctx, acc.TaskID, http.StatusOK)
}

// answerStatus writes the task's current status with code.
func (h *handlers) answerStatus(c echo.Context, ctx context.Context, taskID string, code int) error {
	st, err := h.tasks.Status(ctx, taskID)
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(code, st)
}

// waitTimeout is the request's waitTimeoutSeconds, or the default, bounded by the maximum.
func (h *handlers) waitTimeout(secs *int) time.Duration {
	d := h.cfg.WaitTimeoutDefault
	if secs != nil {
		d = time.Duration(*secs) * time.Second
	}
	return min(d, h.cfg.WaitTimeoutMax)
}

// taskStatus is GET /api/workflows/tasks/{task_id}: from a workflow query while the task runs,
// from workflow_runs after.
func (h *handlers) taskStatus(c echo.Context) error {
	id := c.Param("task_id")
	if !entry.ValidTaskID(id) {
		return httpx.NotFound("task")
	}
	return h.answerStatus(c, c.Request().Context(), id, http.StatusOK)
}
