package entry

import (
	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/bulkapi"
	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// bulkRoute is POST /internal/tasks/{op} (resume or drop every suspended task of a filter) and
// GET /internal/tasks/{op}/{bulk_id} (its progress), as bulkapi.Route serves every bulk operation.
func bulkRoute(wf *entrywf.Client, count entrywf.BulkCount, op string) *bulkapi.Route[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome] {
	return &bulkapi.Route[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome]{
		Plan: wf.BulkPlan(op, count), Path: "/internal/tasks/" + op, ShowOp: true, Applied: "applied",
		Body: func() bulkapi.Body[entry.BulkFilter, entry.SignalPayload] { return new(bulkRequest) },
	}
}

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
	// Operator and Reason go into each task's signal, as with the single-task routes; the
	// operator defaults to the API key's name.
	Operator string `json:"operator" validate:"max=200"`
	Reason   string `json:"reason" validate:"max=500"`
}

// Request is the body as a bulk request.
func (r *bulkRequest) Request(c echo.Context) (bulkapi.Request[entry.BulkFilter, entry.SignalPayload], error) {
	f := entry.BulkFilter{WorkflowID: r.Filter.WorkflowID, Channel: r.Filter.Channel, ChatID: r.Filter.ChatID, Reason: r.Filter.Reason}
	var err error
	f.SuspendedSince, f.SuspendedUntil, err = httpx.TimeRange("filter.suspendedSince", r.Filter.SuspendedSince, "filter.suspendedUntil", r.Filter.SuspendedUntil)
	payload := entry.SignalPayload{Operator: r.Operator, Reason: r.Reason}
	if who := auth.From(c); payload.Operator == "" && who != nil {
		payload.Operator = who.Name
	}
	return bulkapi.Request[entry.BulkFilter, entry.SignalPayload]{Filter: f, DryRun: r.DryRun, Rate: r.RatePerSecond, Params: payload}, err
}
