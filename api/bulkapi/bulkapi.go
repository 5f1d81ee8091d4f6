// Package bulkapi is the HTTP face of every bulk operation (internal/bulk; docs/operations.md
// "Redrive"): one handler shape for the entry queue's resume and drop and the pipeline's redrive.
// POST starts an operation, or with a dry run counts what it would touch; GET reads its progress.
// Each route brings its own request body and the key style of its answers.
package bulkapi

import (
	"cmp"
	"errors"
	"net/http"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// sampleSize bounds the task ids a dry run lists.
const sampleSize = 20

// Request is a bulk request as every route reads it from its own body.
type Request[F, P any] struct {
	// Filter is as the caller sent it; the operation narrows it (bulk.Plan.Apply).
	Filter F
	DryRun bool
	// Rate is the tasks per second; 0 for bulk.DefaultBatchSize.
	Rate   int
	Params P
}

// Body is a route's request body: its own JSON (bound and validated), read into a Request.
type Body[F, P any] interface {
	Request(c echo.Context) (Request[F, P], error)
}

// Route serves one operation: Start is POST Path, Progress is GET Path/{bulk_id}.
type Route[F, P any, O bulk.Outcome] struct {
	Plan *bulk.Plan[F, P, O]
	Path string
	// Body returns an empty request body to bind.
	Body func() Body[F, P]
	// Snake names the answers' keys in snake_case (bulk_id) instead of camelCase (bulkId).
	Snake bool
	// ShowOp adds the operation's name ("op") to every answer.
	ShowOp bool
	// Applied is the progress's key of the tasks the operation applied to ("applied", "redriven").
	Applied string
}

// Start starts the operation the body describes. With a dry run: 200 with the count, a sample of
// task ids and the applied filter. Without: 202 with the operation's id; the operation (a
// workflow whose ID comes from the Idempotency-Key, so a repeated request is answered with the
// same operation, 200, and touches nothing twice) works at the requested rate through the
// single-task path and reports its progress at GET Path/{bulk_id}. 409 for the key with another
// filter.
func (rt *Route[F, P, O]) Start(c echo.Context) error {
	b := rt.Body()
	if err := httpx.Bind(c, b); err != nil {
		return err
	}
	if err := httpx.Validate(b); err != nil {
		return err
	}
	req, err := b.Request(c)
	if err != nil {
		return err
	}
	id := pipeline.NewTaskID()
	key, err := httpx.IdempotencyKey(c) // names the operation: a repeated request finds the same one
	if err != nil {
		return err
	}
	if key != "" {
		id = rt.Plan.Op.IDForKey(auth.From(c).KeyID, key)
	}
	ctx := c.Request().Context()
	if req.DryRun {
		applied, n, sample, err := rt.Plan.DryRun(ctx, req.Filter, sampleSize)
		if err != nil {
			return httpx.FromStore(err)
		}
		return rt.answer(c, http.StatusOK, map[string]any{"dryRun": true, "count": n, "sample": nonNil(sample), "filter": applied})
	}
	started, n, err := rt.Plan.Start(ctx, id, req.Filter, req.Params, cmp.Or(req.Rate, bulk.DefaultBatchSize))
	switch {
	case errors.Is(err, bulk.ErrConflict):
		return httpx.New(http.StatusConflict, "IDEMPOTENCY_CONFLICT", "this Idempotency-Key was used for a "+rt.Plan.Op.Noun+
			" with a different filter; use a new key for a new operation")
	case err != nil:
		return httpx.FromTemporal(httpx.FromStore(err))
	}
	status := http.StatusOK
	if started {
		status = http.StatusAccepted
	}
	return rt.answer(c, status, map[string]any{"bulkId": id, "workflowId": rt.Plan.Op.WorkflowID(id), "count": n,
		"started": started, "progressUrl": rt.Path + "/" + id})
}

// Progress answers an operation's progress and, once it finished, every task's outcome (at most
// bulk.MaxOutcomes).
func (rt *Route[F, P, O]) Progress(c echo.Context) error {
	id := c.Param("bulk_id")
	if !bulk.ValidID(id) {
		return httpx.NotFound(rt.Plan.Op.Noun + " " + id)
	}
	p, err := rt.Plan.Progress(c.Request().Context(), id)
	if errors.Is(err, bulk.ErrNotFound) {
		return httpx.NotFound(rt.Plan.Op.Noun + " " + id)
	}
	if err != nil {
		return httpx.FromTemporal(err)
	}
	return rt.answer(c, http.StatusOK, map[string]any{"bulkId": p.ID, "total": p.Total, "done": p.Done, rt.Applied: p.Applied,
		"skipped": p.Skipped, "errors": p.Errors, "finished": p.Finished, "filter": p.Requested, "outcomes": nonNil(p.Outcomes)})
}

// answer writes body with its keys in the route's style, and the operation's name when it shows it.
func (rt *Route[F, P, O]) answer(c echo.Context, status int, body map[string]any) error {
	out := make(map[string]any, len(body)+1)
	for k, v := range body {
		if rt.Snake {
			k = snake(k)
		}
		out[k] = v
	}
	if rt.ShowOp {
		out["op"] = rt.Plan.Op.Name
	}
	return c.JSON(status, out)
}

// snake is a camelCase key in snake_case: progressUrl → progress_url.
func snake(k string) string {
	var b strings.Builder
	for _, r := range k {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// nonNil makes an empty list answer [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
