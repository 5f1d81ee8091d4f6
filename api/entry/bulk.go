package entry

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// bulkSample bounds the task ids a dry run lists.
const bulkSample = 20

// bulkRequest is POST /internal/tasks/resume and /internal/tasks/drop. Times are RFC 3339.
type bulkRequest struct {
	Filter struct {
		WorkflowID     string `json:"workflowId" validate:"max=200"`
		Channel        string `json:"channel" validate:"max=50"`
		ChatID         string `json:"chatId" validate:"max=200"`
		SuspendedSince string `json:"suspendedSince"`
		SuspendedUntil string `json:"suspendedUntil"`
		Reason         string `json:"reason" validate:"max=200"`
	} `json:"filter"`
	DryRun bool `json:"dryRun"`
	// RatePerSecond bounds how many tasks the operation resumes or drops per second.
	RatePerSecond int `json:"ratePerSecond" validate:"omitempty,min=1,max=100"`
	// Operator and Reason go into each task's signal, as with the single-task routes.
	Operator string `json:"operator" validate:"max=200"`
	Reason   string `json:"reason" validate:"max=500"`
}

func (r *bulkRequest) filter() (entry.BulkFilter, error) {
	f := entry.BulkFilter{WorkflowID: r.Filter.WorkflowID, Channel: r.Filter.Channel, ChatID: r.Filter.ChatID, Reason: r.Filter.Reason}
	var err error
	f.SuspendedSince, f.SuspendedUntil, err = httpx.TimeRange("filter.suspendedSince", r.Filter.SuspendedSince, "filter.suspendedUntil", r.Filter.SuspendedUntil)
	return f, err
}

// bulkResume is POST /internal/tasks/resume: resume every suspended task of a filter.
func (h *handlers) bulkResume(c echo.Context) error { return h.bulk(c, entry.BulkResume) }

// bulkDrop is POST /internal/tasks/drop: drop every suspended task of a filter.
func (h *handlers) bulkDrop(c echo.Context) error { return h.bulk(c, entry.BulkDrop) }

// bulk resumes or drops the suspended tasks of a filter (docs/operations.md "Redrive"). With dryRun: 200
// with the count and a sample of task ids. Without: 202 with the operation's id; the operation
// (a workflow whose ID comes from the Idempotency-Key, so a repeated request is answered with the
// same operation and touches nothing twice) works at ratePerSecond through the single-task path
// and reports its progress at GET /internal/tasks/{op}/{bulk_id}. 409 for the key with another
// filter.
func (h *handlers) bulk(c echo.Context, op string) error {
	var req bulkRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	requested, err := req.filter()
	if err != nil {
		return err
	}
	bulkID := pipeline.NewTaskID()
	key, err := httpx.IdempotencyKey(c) // names a bulk operation: a repeated request finds the same one
	if err != nil {
		return err
	}
	if key != "" {
		bulkID = entry.BulkIDForKey(op, auth.From(c).KeyID, key)
	}
	applied := requested.Until(time.Now().UTC().Truncate(time.Millisecond))
	ctx := c.Request().Context()
	if !req.DryRun {
		if p, err := h.wf.BulkProgress(ctx, op, bulkID); err == nil {
			return bulkStarted(c, op, bulkID, p.Total, false, requested, p.Requested)
		}
	}
	n, sample, err := h.tasks.Runs.CountSuspended(ctx, applied, bulkSample)
	if err != nil {
		return httpx.FromStore(err)
	}
	if req.DryRun {
		return c.JSON(http.StatusOK, map[string]any{"dryRun": true, "op": op, "count": n, "sample": sample, "filter": applied})
	}
	rate := req.RatePerSecond
	if rate == 0 {
		rate = entrywf.DefaultBulkBatchSize
	}
	payload := entry.SignalPayload{Operator: req.Operator, Reason: req.Reason}
	if payload.Operator == "" {
		if who := auth.From(c); who != nil {
			payload.Operator = who.Name
		}
	}
	started, err := h.wf.StartBulk(ctx, entrywf.BulkInput{Op: op, ID: bulkID, Requested: requested, Filter: applied, Payload: payload,
		BatchSize: rate, Interval: entrywf.DefaultBulkInterval, Progress: entrywf.BulkProgress{Total: n}})
	if errors.Is(err, entrywf.ErrBulkConflict) {
		return bulkConflict()
	}
	if err != nil {
		return httpx.FromTemporal(err)
	}
	return bulkStarted(c, op, bulkID, n, started, requested, requested)
}

func bulkConflict() error {
	return httpx.New(http.StatusConflict, "IDEMPOTENCY_CONFLICT",
		"this Idempotency-Key was used for a bulk operation with a different filter; use a new key for a new operation")
}

// bulkStarted answers a bulk operation that runs (or ran): 202 when this request started it,
// 200 for a repeated one.
func bulkStarted(c echo.Context, op, bulkID string, total int64, started bool, requested, existing entry.BulkFilter) error {
	if !entrywf.SameBulkFilter(requested, existing) {
		return bulkConflict()
	}
	status := http.StatusOK
	if started {
		status = http.StatusAccepted
	}
	return c.JSON(status, map[string]any{"bulkId": bulkID, "op": op, "workflowId": entrywf.BulkWorkflowID(op, bulkID), "count": total,
		"started": started, "progressUrl": "/internal/tasks/" + op + "/" + bulkID})
}

// bulkResumeProgress is GET /internal/tasks/resume/{bulk_id}.
func (h *handlers) bulkResumeProgress(c echo.Context) error {
	return h.bulkProgress(c, entry.BulkResume)
}

// bulkDropProgress is GET /internal/tasks/drop/{bulk_id}.
func (h *handlers) bulkDropProgress(c echo.Context) error { return h.bulkProgress(c, entry.BulkDrop) }

// bulkProgress answers a bulk operation's progress and, once it finished, every task's outcome.
func (h *handlers) bulkProgress(c echo.Context, op string) error {
	if !entry.ValidBulkID(c.Param("bulk_id")) {
		return httpx.NotFound("bulk " + op)
	}
	p, err := h.wf.BulkProgress(c.Request().Context(), op, c.Param("bulk_id"))
	if errors.Is(err, entry.ErrNotFound) {
		return httpx.NotFound("bulk " + op + " " + c.Param("bulk_id"))
	}
	if err != nil {
		return httpx.FromTemporal(err)
	}
	outs := p.Outcomes
	if outs == nil {
		outs = []entry.BulkOutcome{}
	}
	return c.JSON(http.StatusOK, map[string]any{"bulkId": p.ID, "op": p.Op, "total": p.Total, "done": p.Done, "applied": p.Applied,
		"skipped": p.Skipped, "errors": p.Errors, "finished": p.Finished, "filter": p.Requested, "outcomes": outs})
}
