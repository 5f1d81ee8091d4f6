package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/waiting"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// Pipeline page bounds.
const (
	pipelineTasksPerPage = 50
	// ledgerShown is how many of the account's newest ledger entries the task page lists.
	ledgerShown = 50
)

var pipelineStatuses = []string{pipeline.StatusPending, pipeline.StatusProcessing, pipeline.StatusSuccess, pipeline.StatusFailed}

type pipelinesData struct {
	Filter    pipelinedb.TaskFilter
	Statuses  []string
	Tasks     []pipeline.Task
	Pager     pager
	Providers []providerRow
	// Waiting is what each running task on the page waits for, by task id.
	Waiting map[string]*waiting.For
	Admin   bool
	CSRF    string
}

type providerRow struct {
	Ref, BaseURL string
	Health       *pipeline.Health
}

// pipelinesPage lists pipeline tasks filtered by status, pipeline and user (one page, one
// count) and the providers with their health and the pin buttons.
func (u *UI) pipelinesPage(c echo.Context) error {
	ctx := c.Request().Context()
	d := pipelinesData{Statuses: pipelineStatuses, Admin: sessionFrom(c).Admin(), Filter: pipelinedb.TaskFilter{
		Status: strings.TrimSpace(c.QueryParam("status")), Pipeline: strings.TrimSpace(c.QueryParam("pipeline")),
		UserID: strings.TrimSpace(c.QueryParam("user"))}}
	pg := pageOf(c, pipelineTasksPerPage)
	ts, total, err := u.pipes.ListTasks(ctx, d.Filter, pg.skip(), int64(pg.Size))
	if err != nil {
		return u.failPage(c, err)
	}
	d.Tasks, d.Pager = ts, pg.with(total, c)
	d.Waiting = u.pipelineWaits(ctx, ts)
	if d.Providers, err = u.providerRows(c); err != nil {
		return u.failPage(c, err)
	}
	return u.render(c, http.StatusOK, "console_pipelines.html", "流水线", "pipelines", d)
}

// pipelineWaits asks the workflow of each running task on the page what it waits for (its state
// query, as the webhook page asks its deliveries): the task documents do not hold the step's
// wait, and a page is at most pipelineTasksPerPage rows. A task whose workflow does not answer
// shows none.
func (u *UI) pipelineWaits(ctx context.Context, ts []pipeline.Task) map[string]*waiting.For {
	out := make(map[string]*waiting.For, len(ts))
	if u.p.Temporal == nil {
		return out
	}
	wf := &pipelinewf.Client{Temporal: u.p.Temporal, TaskQueue: u.p.Config.Temporal.TaskQueue}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, t := range ts {
		if t.Status != pipeline.StatusPending && t.Status != pipeline.StatusProcessing {
			continue
		}
		g.Go(func() error {
			qctx, cancel := context.WithTimeout(gctx, 3*time.Second)
			defer cancel()
			if w, err := wf.WaitingFor(qctx, t.ID); err == nil {
				mu.Lock()
				out[t.ID] = w
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// providerRows joins the providers with their health (two reads; providers are a registry an
// administrator maintains, tens of rows, not a growing collection).
func (u *UI) providerRows(c echo.Context) ([]providerRow, error) {
	ctx := c.Request().Context()
	ps, err := u.pipes.ListProviders(ctx)
	if err != nil {
		return nil, err
	}
	hs, err := u.pipes.ListHealth(ctx)
	if err != nil {
		return nil, err
	}
	byRef := make(map[string]pipeline.Health, len(hs))
	for _, h := range hs {
		byRef[h.ProviderRef] = h
	}
	out := make([]providerRow, 0, len(ps))
	for _, p := range ps {
		r := providerRow{Ref: p.Ref, BaseURL: p.BaseURL}
		if h, ok := byRef[p.Ref]; ok {
			r.Health = &h
		}
		out = append(out, r)
	}
	return out, nil
}

type stepRow struct {
	pipeline.StepRecord
	Duration string
	Input    string
	Output   string
}

type pipelineTaskData struct {
	Task     *pipeline.Task
	Input    string
	Steps    []stepRow
	Quota    *pipeline.Quota
	Ledger   []pipeline.LedgerEntry
	Temporal string
	// RedriveKey makes the redrive button's request idempotent (a double submit is one redrive).
	RedriveKey string
}

// pipelineTaskPage is one task: its facts, the step timeline (provider chosen and tried,
// duration, mapped input and output, callback state), and its account's quota ledger.
func (u *UI) pipelineTaskPage(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if !pipeline.ValidTaskID(id) {
		return u.render(c, http.StatusNotFound, "error.html", "任务不存在", "", "无效的流水线任务 ID")
	}
	t, err := u.pipes.GetTask(ctx, id)
	if err != nil {
		return u.failPage(c, err)
	}
	d := pipelineTaskData{Task: t, Input: prettyJSON(t.InputData), Temporal: u.temporalLink(t.WorkflowID), RedriveKey: pipeline.NewTaskID()}
	steps, err := u.pipes.StepsOf(ctx, t)
	if err != nil {
		return u.failPage(c, err)
	}
	for _, s := range steps {
		r := stepRow{StepRecord: s, Input: prettyJSON(s.Input), Output: prettyJSON(s.Output)}
		if s.StartedAt != nil && s.CompletedAt != nil {
			r.Duration = s.CompletedAt.Sub(*s.StartedAt).Round(time.Millisecond).String()
		}
		d.Steps = append(d.Steps, r)
	}
	q, err := u.pipes.QuotaPage(ctx, t.UserID, t.FeatureID, ledgerShown)
	if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
		return u.failPage(c, err)
	}
	if q != nil {
		d.Quota, d.Ledger = q, q.Ledger
	}
	return u.render(c, http.StatusOK, "console_pipeline_task.html", "流水线任务 "+id, "pipelines", d)
}

// pinProvider pins a provider up or down, or hands it back to the health check ("auto"): the
// store call PUT /api/v1/providers/{ref}/health makes.
func (u *UI) pinProvider(c echo.Context) error {
	const target = "/ui/console/pipelines"
	ref, status := c.Param("ref"), c.FormValue("status")
	pinned := true
	switch status {
	case "up", "down":
	case "auto":
		status, pinned = "", false
	default:
		return back(c, target, "error", "状态只能是 up、down 或 auto")
	}
	_, err := u.pipes.SetHealthManual(c.Request().Context(), ref, status, pinned)
	return u.done(c, target, err, fmt.Sprintf("提供方 %s 已设为 %s", ref, c.FormValue("status")))
}
