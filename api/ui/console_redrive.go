package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// The console's redrive (docs/operations.md "Redrive"): a button on a failed task's page, and a bulk form
// that shows the dry-run count and a sample before the confirm button starts the bulk operation.
// Both do what the JSON API's redrive endpoints do.

// uiKeyScope scopes the console's redrive keys (the JSON API scopes them by API key).
const uiKeyScope = "ui"

// redrivePipeline redrives one failed task. The form carries a key made when the page was
// rendered, so a double submit is the same redrive.
func (u *UI) redrivePipeline(c echo.Context) error {
	id := c.Param("id")
	target := "/ui/console/pipelines/" + url.PathEscape(id)
	key := c.FormValue("redrive_key")
	if err := pipeline.CheckIdempotencyKey(key); err != nil || !pipeline.ValidTaskID(id) {
		return back(c, target, "error", "重驱请求无效，请刷新页面后重试")
	}
	if u.p.Temporal == nil {
		return u.done(c, target, errNoTemporal, "")
	}
	ctx := c.Request().Context()
	task, err := u.pipes.GetTask(ctx, id)
	if err != nil {
		return u.done(c, target, err, "")
	}
	wf := &pipelinewf.Client{Temporal: u.p.Temporal, TaskQueue: u.p.Config.Temporal.TaskQueue}
	redriveID := pipeline.RedriveIDForKey(uiKeyScope, id, key)
	if _, err := wf.RedriveTask(ctx, task, redriveID, "", u.p.Config.Pipeline.RedriveWindow); err != nil {
		return u.done(c, target, err, "")
	}
	if task, err = u.pipes.GetTask(ctx, id); err != nil {
		return u.done(c, target, err, "")
	}
	rd := task.RedriveOf(redriveID)
	return back(c, target, "ok", fmt.Sprintf("已从第 %d 步（%s）重驱，这是第 %d 次重驱", rd.FromStep, rd.FromStepName, task.RedriveCount))
}

type bulkRedriveData struct {
	Filter  pipeline.RedriveFilter
	Since   string
	Until   string
	Count   int64
	Sample  []string
	Key     string
	Problem string
}

// bulkFilterOf reads the bulk form's filter (query or form values); a bad time is a problem the
// page states.
func bulkFilterOf(c echo.Context) (d bulkRedriveData) {
	v := func(name string) string { return strings.TrimSpace(c.FormValue(name)) }
	d.Filter = pipeline.RedriveFilter{Pipeline: v("pipeline"), Version: v("version"), UserID: v("user"), Provider: v("provider"), Error: v("error")}
	d.Since, d.Until = v("failed_since"), v("failed_until")
	for _, f := range []struct {
		name, val string
		dst       **time.Time
	}{{"failed_since", d.Since, &d.Filter.FailedSince}, {"failed_until", d.Until, &d.Filter.FailedUntil}} {
		if f.val == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, f.val)
		if err != nil {
			d.Problem = fmt.Sprintf("%s 必须是 RFC 3339 时间，例如 2026-01-02T15:04:05Z", f.name)
			continue
		}
		t = t.UTC()
		*f.dst = &t
	}
	return d
}

// bulkRedrivePage is the bulk form with its dry run: how many failed tasks the filter selects
// (within PIPELINE_REDRIVE_WINDOW) and a sample, and the confirm button.
func (u *UI) bulkRedrivePage(c echo.Context) error {
	d := bulkFilterOf(c)
	if d.Problem == "" {
		now := time.Now().UTC()
		n, sample, err := u.pipes.CountRedrivable(c.Request().Context(), d.Filter.Within(now, u.p.Config.Pipeline.RedriveWindow, now), 10)
		if err != nil {
			return u.failPage(c, err)
		}
		d.Count, d.Sample, d.Key = n, sample, pipeline.NewTaskID()
	}
	return u.render(c, http.StatusOK, "console_pipeline_redrive.html", "批量重驱", "pipelines", d)
}

// runBulkRedrive starts the confirmed bulk redrive; the form's key (made with the dry run) is
// its idempotency key, so a double submit starts one operation.
func (u *UI) runBulkRedrive(c echo.Context) error {
	const target = "/ui/console/pipelines"
	d := bulkFilterOf(c)
	key := c.FormValue("bulk_key")
	if d.Problem != "" || pipeline.CheckIdempotencyKey(key) != nil {
		return back(c, target, "error", "批量重驱请求无效，请重新预演")
	}
	if u.p.Temporal == nil {
		return u.done(c, target, errNoTemporal, "")
	}
	wf := &pipelinewf.Client{Temporal: u.p.Temporal, TaskQueue: u.p.Config.Temporal.TaskQueue}
	bulkID := pipelinewf.BulkRedrive.IDForKey(uiKeyScope, key)
	_, n, err := wf.BulkRedrivePlan(u.pipes.CountRedrivable, u.p.Config.Pipeline.RedriveWindow).
		Start(c.Request().Context(), bulkID, d.Filter, struct{}{}, bulk.DefaultBatchSize)
	return u.done(c, target, err, fmt.Sprintf("批量重驱 %s 已开始：%d 个失败任务，每秒 %d 个", bulkID, n, bulk.DefaultBatchSize))
}
