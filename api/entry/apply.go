package entry

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
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
		Now: h.now(), Window: h.cfg.IdempotencyWindow, Owner: entry.OwnerKey(auth.From(c).KeyID)})
	if env.Context.RequestID == "" {
		env.Context.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
		env.Context.TraceID = env.Context.RequestID
	}
	ctx := c.Request().Context()
	acc, err := h.sub.Submit(ctx, env)
	if err != nil {
		return toHTTP(err)
	}
	// A duplicate whose record was read (Recorded, or an owner) names a task another caller may
	// have submitted: then nothing was enqueued for this caller, and nothing of that task is shown.
	if may := reader(c); acc.Duplicate && (acc.Recorded != nil || acc.Owner != "") && may != nil && !may(acc.Owner) {
		return httpx.Conflict("idempotencyKey names a task another API key submitted; send a key of your own").
			WithDetail("field", "idempotencyKey")
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

// reader is which entry tasks the caller may read: an admin key bound to no project reads every
// one (nil), any other key the tasks it submitted. Entry tasks belong to no project, so a
// project-bound admin key is an owner like any other.
func reader(c echo.Context) intake.MayRead {
	id := auth.From(c)
	if id.Permission.Includes(auth.PermAdmin) && id.ProjectID == "" {
		return nil
	}
	own := entry.OwnerKey(id.KeyID)
	return func(owner string) bool { return owner == own }
}

// answerStatus writes the task's current status with code, or 404 when the caller may not read
// the task (the same answer as for no task, since task ids can be computed from their keys).
func (h *handlers) answerStatus(c echo.Context, ctx context.Context, taskID string, code int) error {
	st, err := h.tasks.StatusFor(ctx, taskID, reader(c))
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
