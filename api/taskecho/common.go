package taskecho

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// param returns a path parameter decoded once, so an id containing %2F (TaskEcho's queue ids
// like ".flow%2Ftask.json") stays one id.
func param(c echo.Context, name string) string {
	v := c.Param(name)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// actor is the caller as recorded in pulled_by / released_by and the audit log.
func actor(c echo.Context) taskecho.Actor {
	id := auth.From(c)
	if id == nil {
		return taskecho.Actor{Name: "unknown"}
	}
	return taskecho.Actor{Name: id.Name, KeyID: id.KeyID}
}

// project authorizes the caller for the project in the path and returns its id.
func project(c echo.Context) (string, error) {
	p := param(c, "projectId")
	return p, auth.RequireProject(c, p)
}

// ok writes TaskEcho's success envelope.
func ok(c echo.Context, status int, data any, message string) error {
	return httpx.Envelope(c, status, data, message)
}

// fail maps domain errors to TaskEcho's error codes; store errors go through httpx.FromStore.
func fail(err error) error {
	var de *taskecho.Error
	var ve *taskecho.ValidationError
	var je *taskecho.ErrInvalidJSON
	switch {
	case errors.As(err, &de):
		row := de.Kind.Row()
		e := httpx.New(row.HTTPStatus, row.Code, de.Message)
		if len(de.Details) > 0 {
			e.Details = de.Details
		}
		return e
	case errors.As(err, &ve):
		row := taskecho.KindValidation.Row()
		e := httpx.New(row.HTTPStatus, row.Code, ve.Message)
		if len(ve.Errors) > 0 {
			listed := httpx.Summarise(ve.Errors)
			all := make([]map[string]string, len(listed))
			for i, fe := range listed {
				all[i] = map[string]string{"field": fe.Field, "reason": fe.Reason}
			}
			e.Details = map[string]any{"field": ve.Errors[0].Field, "reason": ve.Errors[0].Reason, "all_errors": all,
				"error_count": len(ve.Errors)}
		}
		return e
	case errors.As(err, &je):
		row := taskecho.KindValidation.Row()
		return httpx.New(row.HTTPStatus, row.Code, je.Error()).WithDetail("parse_error", je.Err.Error())
	}
	return httpx.FromStore(err)
}

// page parses page/pageSize (pageSize defaults to def, capped at 100; page at most
// listing.MaxPage).
func page(c echo.Context, def int) (listing.Page, error) {
	p, err := intQuery(c, "page", 1)
	if err != nil || p < 1 {
		return listing.Page{}, httpx.Validation("page", "页码必须是大于 0 的整数")
	}
	if p > listing.MaxPage {
		return listing.Page{}, httpx.Validation("page", "页码不能超过 "+itoa(listing.MaxPage)).WithDetail("max", listing.MaxPage)
	}
	s, err := intQuery(c, "pageSize", def)
	if err != nil || s < 1 {
		return listing.Page{}, httpx.Validation("pageSize", "每页数量必须是大于 0 的整数")
	}
	return listing.Page{Page: p, Size: min(s, 100)}, nil
}

func intQuery(c echo.Context, name string, def int) (int, error) {
	v := strings.TrimSpace(c.QueryParam(name))
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

// pagination is TaskEcho's paginated data.
func pagination(items any, pg listing.Page, total int64) map[string]any {
	pages := (total + int64(pg.Size) - 1) / int64(pg.Size)
	return map[string]any{"items": items, "pagination": map[string]any{
		"page": pg.Page, "pageSize": pg.Size, "total": total, "totalPages": pages,
	}}
}

// ts renders a time as TaskEcho does (ISO-8601, milliseconds, Z).
func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// tsp renders an optional time (null when unset).
func tsp(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// csv splits a comma-separated query value, dropping blanks.
func csv(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
