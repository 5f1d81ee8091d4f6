// Package webhook mounts the webhook result table endpoints: CreateWebhookResultsForGroups,
// a one-off WebhookResultWorker scan, and the task table's status update with its RetryCount
// rule.
package webhook

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// waitTimeout bounds how long a request waits for the workflow it started.
const waitTimeout = 60 * time.Second

var numericID = regexp.MustCompile(`^[0-9]{1,20}$`)

type handlers struct {
	d      httpx.Deps
	feishu *feishu.Client
}

// Mount adds the webhook routes (write permission).
func Mount(e *echo.Echo, d httpx.Deps) error {
	cl, err := bitable.NewFeishuClient(d.Platform.Config.Webhook)
	if err != nil {
		return err
	}
	if cl != nil {
		d.Platform.AddCheck("feishu", cl.Ping)
	}
	h := &handlers{d: d, feishu: cl}
	g := e.Group("/api/v1/webhook", d.Authn, auth.Require(auth.PermWrite))
	g.POST("/groups", h.createGroups)
	g.POST("/sweeps", h.sweep)
	g.POST("/tasks/:task_id/status", h.setTaskStatus)
	g.POST("/recover", h.recover)
	return nil
}

type groupsReq struct {
	ParentTaskID string `json:"parent_task_id" validate:"required"`
}

// createGroups runs CreateWebhookResultsForGroups for a finished 综合页搜索 parent task and
// returns what it created. The workflow ID is derived from the parent, so a double click
// joins the running execution.
func (h *handlers) createGroups(c echo.Context) error {
	var req groupsReq
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	if !numericID.MatchString(req.ParentTaskID) {
		return httpx.Validation("parent_task_id", "must be a numeric TaskID")
	}
	in := webhookwf.GroupsInputFor(h.d.Platform.Config.Webhook, req.ParentTaskID)
	var res webhook.CreateResult
	if err := h.run(c.Request().Context(), func(ctx context.Context, c client.Client, queue string) (client.WorkflowRun, error) {
		return webhookwf.StartGroups(ctx, c, queue, in)
	}, &res); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"workflow_id": webhookwf.GroupsWorkflowID(req.ParentTaskID), "result": res})
}

type sweepReq struct {
	GroupID string `json:"group_id"`
	Date    string `json:"date"`
}

// sweep runs one WebhookResultWorker scan (optionally narrowed like the CLI's --group-id/--date).
func (h *handlers) sweep(c echo.Context) error {
	var req sweepReq
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if req.Date != "" {
		if _, err := time.Parse(feishu.DayLayout, req.Date); err != nil {
			return httpx.Validation("date", "must be YYYY-MM-DD")
		}
	}
	in := webhookwf.SweepInputFor(h.d.Platform.Config.Webhook, webhook.RowFilter{GroupID: req.GroupID, Date: req.Date})
	var res webhook.SweepResult
	id := webhookwf.SweepID("manual", time.Now())
	if err := h.run(c.Request().Context(), func(ctx context.Context, c client.Client, queue string) (client.WorkflowRun, error) {
		return webhookwf.StartSweep(ctx, c, queue, id, in)
	}, &res); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"workflow_id": id, "result": res})
}

// run starts a workflow with start (one of the workflows/webhook client helpers), waits for it
// and decodes its result into out.
func (h *handlers) run(ctx context.Context, start func(context.Context, client.Client, string) (client.WorkflowRun, error), out any) error {
	cfg := h.d.Platform.Config
	if cfg.Webhook.TaskBitableURL == "" || cfg.Webhook.WebhookBitableURL == "" {
		return httpx.Unavailable("feishu", time.Minute)
	}
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	run, err := start(ctx, h.d.Platform.Temporal, cfg.Temporal.TaskQueue)
	if err != nil {
		return httpx.FromTemporal(err)
	}
	if err := run.Get(ctx, out); err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			switch appErr.Type() {
			case "InvalidFilter":
				return httpx.New(http.StatusUnprocessableEntity, "INVALID_FILTER", appErr.Error())
			case "ParentTaskNotFound":
				return httpx.NotFound("parent task")
			}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return httpx.Unavailable("temporal", 10*time.Second)
		}
		return httpx.FromTemporal(err)
	}
	return nil
}

type statusReq struct {
	Status string `json:"status" validate:"required"`
}

// setTaskStatus changes a task's Status applying the RetryCount rule in the same write.
func (h *handlers) setTaskStatus(c echo.Context) error {
	taskID := c.Param("task_id")
	if !numericID.MatchString(taskID) {
		return httpx.Validation("task_id", "must be a numeric TaskID")
	}
	var req statusReq
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	if _, err := webhook.NextTaskStatus(webhook.Task{}, req.Status); err != nil {
		return httpx.Validation("status", err.Error())
	}
	if h.feishu == nil || h.d.Platform.Config.Webhook.TaskBitableURL == "" {
		return httpx.Unavailable("feishu", time.Minute)
	}
	t, err := bitable.Open(c.Request().Context(), h.feishu, webhookwf.TargetFrom(h.d.Platform.Config.Webhook).URLs, webhook.FieldNamesFrom(h.d.Platform.Config.Webhook))
	if err != nil {
		return httpx.Unavailable("feishu", time.Minute)
	}
	u, err := t.SetTaskStatus(c.Request().Context(), taskID, req.Status)
	switch {
	case errors.Is(err, webhook.ErrTaskNotFound):
		return httpx.NotFound("task")
	case feishu.IsRetryable(err):
		return httpx.Unavailable("feishu", 5*time.Second)
	case err != nil:
		return httpx.Unavailable("feishu", 30*time.Second)
	}
	return c.JSON(http.StatusOK, map[string]any{"task_id": taskID, "status": u.Status, "retry_count": u.RetryCount})
}
