package entry

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
)

// maxSuspendedList bounds GET /internal/tasks/suspended.
const maxSuspendedList = 500

// stats is GET /internal/tasks/stats: counts by status and by channel from Temporal visibility.
func (h *handlers) stats(c echo.Context) error {
	st, err := h.tasks.Stats(c.Request().Context(), h.cfg.SuspendedAlertThreshold)
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(http.StatusOK, st)
}

// suspended is GET /internal/tasks/suspended?limit=N: the tasks waiting for an operator.
func (h *handlers) suspended(c echo.Context) error {
	limit := 100
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxSuspendedList {
			return httpx.Validation("limit", "limit must be an integer between 1 and "+strconv.Itoa(maxSuspendedList))
		}
		limit = n
	}
	list, err := h.tasks.Suspended(c.Request().Context(), limit)
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"tasks": list, "count": len(list)})
}

// opsTask is GET /internal/tasks/{id}: the status plus the workflow_runs document.
func (h *handlers) opsTask(c echo.Context) error {
	id := c.Param("id")
	if !entry.ValidTaskID(id) {
		return httpx.NotFound("task")
	}
	ctx := c.Request().Context()
	st, err := h.tasks.Status(ctx, id)
	if err != nil {
		return toHTTP(err)
	}
	run, err := h.tasks.Runs.Get(ctx, id)
	if err != nil && !errors.Is(err, entry.ErrNotFound) {
		return toHTTP(err)
	}
	// run is null while the workflow has not recorded itself yet (its first activity).
	return c.JSON(http.StatusOK, map[string]any{"task": st, "run": run})
}

// resume is POST /internal/tasks/{id}/resume: a suspended task runs again with a fresh budget.
func (h *handlers) resume(c echo.Context) error { return h.signal(c, entry.SignalResume) }

// drop is POST /internal/tasks/{id}/drop: a suspended or retrying task ends as dropped.
func (h *handlers) drop(c echo.Context) error { return h.signal(c, entry.SignalDrop) }

func (h *handlers) signal(c echo.Context, name string) error {
	id := c.Param("id")
	if !entry.ValidTaskID(id) {
		return httpx.NotFound("task")
	}
	var p entry.SignalPayload
	if err := httpx.BindOptional(c, &p); err != nil {
		return err
	}
	if p.Operator == "" {
		if who := auth.From(c); who != nil {
			p.Operator = who.Name
		}
	}
	ctx := c.Request().Context()
	act := h.tasks.Resume
	if name == entry.SignalDrop {
		act = h.tasks.Drop
	}
	prev, err := act(ctx, id, p)
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(http.StatusAccepted, map[string]any{"taskId": id, "signal": name, "previousStatus": prev.Status})
}
