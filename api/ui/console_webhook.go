package ui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/webhook"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// webhookRows bounds each list of the webhook page: every row costs one query (running) or one
// result read (finished) against Temporal, so the lists are short.
const webhookRows = 25

type deliveryRow struct {
	WorkflowID, BizType, GroupID, Temporal string
	State                                  webhookwf.DeliveryState
	At                                     time.Time
	Err                                    string
}

type webhookData struct {
	Running      []*deliveryRow
	RunningTotal int64
	Broken       []*deliveryRow
	BrokenTotal  int64
	Configured   bool
}

// webhookPage lists the result rows being delivered (with the TaskIDs a row still waits for)
// and those that are failed or in error (LastError, RetryCount), from the delivery
// workflows: their state query while running, their result once closed. A failed row is
// still running (it waits to push again), so it is in both lists.
func (u *UI) webhookPage(c echo.Context) error {
	ctx := c.Request().Context()
	cfg := u.p.Config.Webhook
	d := webhookData{Configured: cfg.TaskBitableURL != "" && cfg.WebhookBitableURL != ""}
	running := kindQuery(webhook.DeliveryKind, "ExecutionStatus = 'Running'")
	// A row handed from its sweep's claim to its own run shows once: by that run, not by the
	// claim that continued as new.
	broken := kindQuery(webhook.DeliveryKind, fmt.Sprintf("TaskloomStatus IN ('%s', '%s') AND ExecutionStatus != 'ContinuedAsNew'",
		webhook.StatusFailed, webhook.StatusError))
	var err error
	if d.Running, d.RunningTotal, err = u.deliveries(ctx, running); err != nil {
		return u.failPage(c, err)
	}
	if d.Broken, d.BrokenTotal, err = u.deliveries(ctx, broken); err != nil {
		return u.failPage(c, err)
	}
	return u.render(c, http.StatusOK, "console_webhook.html", "Webhook 投递", "webhook", d)
}

// deliveries lists up to webhookRows delivery executions of q with their state: the state query
// of a running one, the outcome of a closed one (asking a running one for its outcome would
// wait until it closes). A row whose state cannot be read says why.
func (u *UI) deliveries(ctx context.Context, q string) ([]*deliveryRow, int64, error) {
	total, err := u.countWF(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	execs, err := u.listWF(ctx, q, webhookRows)
	if err != nil {
		return nil, 0, err
	}
	rows := make([]*deliveryRow, len(execs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, e := range execs {
		id, runID := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
		r := &deliveryRow{WorkflowID: id, Temporal: u.temporalLink(id), At: e.GetStartTime().AsTime()}
		r.BizType, r.GroupID = keywordAttr(e, searchattr.BizType.GetName()), keywordAttr(e, searchattr.GroupID.GetName())
		rows[i] = r
		running := e.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
		g.Go(func() error {
			if running {
				st, err := webhookwf.QueryDeliveryState(gctx, u.p.Temporal, id, runID)
				if err != nil {
					r.Err = err.Error()
					return nil
				}
				r.State = st
				return nil
			}
			if ct := e.GetCloseTime(); ct != nil {
				r.At = ct.AsTime()
			}
			out, err := webhookwf.DeliveryOutcomeOf(gctx, u.p.Temporal, id, runID)
			if err != nil {
				r.Err = err.Error()
				return nil
			}
			r.State = webhookwf.DeliveryState{Status: out.Status, RetryCount: out.RetryCount, LastError: out.LastError}
			return nil
		})
	}
	_ = g.Wait() // each row keeps its own error
	return rows, total, nil
}

// keywordAttr is a keyword search attribute of a listed execution ("" when unset).
func keywordAttr(e *workflowpb.WorkflowExecutionInfo, name string) string {
	var v string
	if p, ok := e.GetSearchAttributes().GetIndexedFields()[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
	}
	return v
}

// sweepNow starts one WebhookResultWorker scan narrowed to a group or a date, with the input
// POST /api/v1/webhook/sweeps gives it, and does not wait: the page links to the execution.
func (u *UI) sweepNow(c echo.Context) error {
	const target = "/ui/console/webhook"
	cfg := u.p.Config
	if cfg.Webhook.TaskBitableURL == "" || cfg.Webhook.WebhookBitableURL == "" {
		return back(c, target, "error", "未配置飞书多维表格（TASK_BITABLE_URL / WEBHOOK_BITABLE_URL），无法扫描")
	}
	f := webhook.RowFilter{GroupID: strings.TrimSpace(c.FormValue("group_id")), Date: strings.TrimSpace(c.FormValue("date"))}
	if f.Date != "" {
		if _, err := time.Parse(feishu.DayLayout, f.Date); err != nil {
			return back(c, target, "error", "日期格式应为 YYYY-MM-DD")
		}
	}
	id := webhookwf.SweepID("manual", time.Now())
	if u.p.Temporal == nil {
		return u.done(c, target, errNoTemporal, "")
	}
	_, err := webhookwf.StartSweep(c.Request().Context(), u.p.Temporal, cfg.Temporal.TaskQueue, id, webhookwf.SweepInputFor(cfg.Webhook, f))
	return u.done(c, target, err, "已开始扫描（"+id+"），完成后刷新查看")
}
