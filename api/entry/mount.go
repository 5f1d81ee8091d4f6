// Package entry is the HTTP face of the entry subsystem (docs/entry.md): the apply intake and task
// status for callers, the operator routes under /internal/tasks, and the Telegram webhook.
package entry

import (
	"errors"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// handlers holds what the entry routes need.
type handlers struct {
	cfg   *config.Entry
	sub   *intake.Submitter
	tasks *intake.Tasks
	wf    *entrywf.Client
	now   func() time.Time
}

// Mount attaches the entry routes. Callers need a write key to apply and a read key for status;
// the operator routes need an admin key bound to no project; the Telegram webhook authenticates
// by its secret token.
func Mount(e *echo.Echo, d httpx.Deps) error {
	p := d.Platform
	wf := entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue)
	h := &handlers{cfg: &p.Config.Entry, sub: intake.NewSubmitter(p, wf), tasks: intake.NewTasks(p, wf), wf: wf, now: time.Now}
	// The operator routes see and change every caller's tasks: an admin key bound to no project.
	read, write, admin := auth.Require(auth.PermRead), auth.Require(auth.PermWrite), auth.RequireGlobal(auth.PermAdmin)
	e.POST("/api/workflows/apply", h.apply, d.Authn, write)
	e.GET("/api/workflows/tasks/:task_id", h.taskStatus, d.Authn, read)

	ops := e.Group("/internal/tasks", d.Authn, admin)
	ops.GET("/stats", h.stats)
	ops.GET("/suspended", h.suspended)
	for _, op := range []string{entry.BulkResume, entry.BulkDrop} {
		r := bulkRoute(wf, h.tasks.Runs.CountSuspended, op)
		ops.POST("/"+op, r.Start)
		ops.GET("/"+op+"/:bulk_id", r.Progress)
	}
	ops.GET("/:id", h.opsTask)
	ops.POST("/:id/resume", h.resume)
	ops.POST("/:id/drop", h.drop)

	e.POST("/telegram/webhook", h.telegram)
	return nil
}

// toHTTP maps the entry domain's refusals (entry.Refusals) and an intake that could not enqueue
// (a dependency down: 503, not a refusal); anything else goes to the shared store/Temporal mapping.
func toHTTP(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := refusalAnswer(err); ok {
		return e
	}
	var ee *intake.EnqueueError
	if errors.As(err, &ee) {
		return httpx.Unavailable(ee.Dependency, httpx.TemporalRetryAfter)
	}
	if mapped := httpx.FromStore(err); mapped != err {
		return mapped
	}
	return httpx.FromTemporal(err)
}
