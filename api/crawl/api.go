// Package crawl is the HTTP API of crawl tasks: start one, read its status.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/api/serviceerror"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/waiting"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// Routes.
const (
	PathTasks = "/api/v1/crawl-tasks"
	PathTask  = "/api/v1/crawl-tasks/:id"
)

type handlers struct {
	deps     httpx.Deps
	tasks    *crawldb.Store
	progress *countscript.Store
}

// Mount adds the crawl task routes.
func Mount(e *echo.Echo, d httpx.Deps) error {
	if d.Platform == nil || d.Authn == nil {
		return errors.New("crawl api: platform and authentication are required")
	}
	h := &handlers{deps: d, tasks: crawldb.New(d.Platform.Mongo), progress: countscript.FromPlatform(d.Platform)}
	e.POST(PathTasks, h.create, d.Authn, auth.Require(auth.PermWrite))
	e.GET(PathTask, h.get, d.Authn, auth.Require(auth.PermRead))
	return nil
}

type createRequest struct {
	OriginalTaskID int64 `json:"original_task_id" validate:"required,gt=0"`
}

// createResponse answers POST: the task's workflow and its status.
type createResponse struct {
	OriginalTaskID int64  `json:"original_task_id"`
	WorkflowID     string `json:"workflow_id"`
	RunID          string `json:"run_id,omitempty"`
	Status         string `json:"status"`
	Created        bool   `json:"created"`
}

// create starts the task's workflow: 202 for a new task, 200 with the
// existing one when the ID already ran or runs (a double click or a retry).
func (h *handlers) create(c echo.Context) error {
	var req createRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	cfg := h.deps.Platform.Config
	in := crawlwf.Input{OriginalTaskID: req.OriginalTaskID, Source: crawl.SourceAPI,
		CrawlerTimeout: cfg.Crawl.CrawlerTimeout, CompletionDeadline: cfg.Crawl.CompletionDeadline}
	ctx := c.Request().Context()
	run, err := crawlwf.Start(ctx, h.deps.Platform.Temporal, cfg.Temporal.TaskQueue, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &started):
		return h.existing(c, req.OriginalTaskID)
	case err != nil:
		return httpx.FromTemporal(err)
	}
	return c.JSON(http.StatusAccepted, createResponse{OriginalTaskID: req.OriginalTaskID,
		WorkflowID: run.GetID(), RunID: run.GetRunID(), Status: crawl.Running, Created: true})
}

func (h *handlers) existing(c echo.Context, id int64) error {
	resp := createResponse{OriginalTaskID: id, WorkflowID: crawlwf.WorkflowID(id), Status: crawl.Running}
	t, err := h.tasks.Get(c.Request().Context(), id)
	switch {
	case err == nil:
		resp.RunID, resp.Status = t.RunID, t.Status
	case !isNotFound(err):
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, resp)
}

func (h *handlers) get(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return httpx.Validation("id", "id must be a positive integer original_task_id")
	}
	ctx := c.Request().Context()
	// A task running by its record is checked against its workflow (reconcile on read), so one
	// terminated from outside answers Terminated at once.
	t, err := h.tasks.Follow(ctx, id, func(ctx context.Context) (*closure.Closure, error) {
		return crawlwf.Closure(ctx, h.deps.Platform.Temporal, id)
	})
	if isNotFound(err) {
		return httpx.NotFound("crawl task")
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	v := t.View()
	if err := h.live(ctx, id, t.Finished(), &v); err != nil {
		return httpx.FromStore(err)
	}
	if !t.Finished() {
		h.waitingFor(ctx, &v)
	}
	return c.JSON(http.StatusOK, v)
}

// queryTimeout bounds the workflow query of a GET: with no worker polling, a query waits.
const queryTimeout = 3 * time.Second

// waitingFor asks the task's workflow what it waits for, and says how far the tweets are. An
// answer without it is still the task, so a failed query is only logged.
func (h *handlers) waitingFor(ctx context.Context, v *crawl.TaskView) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	w, err := crawlwf.WaitingFor(qctx, h.deps.Platform.Temporal, v.OriginalTaskID)
	if err != nil {
		h.deps.Platform.Log.Warn("waiting_for unknown", "original_task_id", v.OriginalTaskID, "err", err)
		return
	}
	if w != nil && w.Reason == waiting.TweetsMissing {
		total := "?"
		if v.TotalTweets != nil {
			total = strconv.FormatInt(*v.TotalTweets, 10)
		}
		w.Detail = fmt.Sprintf("%d / %s distinct tweets processed", v.ProcessedTweets, total)
		if w.Until != nil {
			w.Detail += ", deadline " + w.Until.UTC().Format("15:04:05 UTC")
		}
	}
	v.WaitingFor = w
}

// live fills the counts of a running task from its task_progress hash, and
// of a finished one the copies that arrived after it finished (the hash
// outlives the task by CRAWL_PROGRESS_TTL).
func (h *handlers) live(ctx context.Context, id int64, finished bool, v *crawl.TaskView) error {
	p, err := h.progress.Get(ctx, id)
	if err != nil {
		return err
	}
	v.DuplicateTweets = max(v.DuplicateTweets, p.DuplicateTweets)
	v.DeadLetteredRecords = max(v.DeadLetteredRecords, p.DeadLetteredRecords)
	if finished {
		return nil
	}
	v.ProcessedTweets, v.ProgressStatus = p.ProcessedTweets, p.Status
	if p.TotalTweets >= 0 {
		v.TotalTweets = &p.TotalTweets
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, crawl.ErrTaskNotFound) }
