package pipeline

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// listLimit bounds list responses.
const listLimit = 500

// publishPipeline validates a definition fully and stores it: 201 when new, 200 when the same
// schema was already published under that version, 409 when the version holds a different one.
func (h *handlers) publishPipeline(c echo.Context) error {
	body, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	def, err := pipeline.ParseDefinition(body)
	if err != nil {
		return schemaError(err)
	}
	ctx := c.Request().Context()
	lk, err := h.store.Lookup(ctx)
	if err != nil {
		return httpx.FromStore(err)
	}
	if err := pipeline.ValidateDefinition(def, lk); err != nil {
		return schemaError(err)
	}
	rec, created, err := h.store.PublishSchema(ctx, def)
	if errors.Is(err, pipeline.ErrSchemaConflict) {
		return httpx.Conflict(err.Error()).WithDetail("name", def.Name).WithDetail("version", def.Version)
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, rec)
}

// schemaError is a 400 naming the first problem's field, with every problem in details.
func schemaError(err error) error {
	fe, ok := pipeline.AsFieldError(err)
	if !ok {
		return httpx.Validation("body", err.Error())
	}
	e := httpx.Validation(fe.Path(), err.Error())
	var ve *pipeline.ValidationError
	if errors.As(err, &ve) {
		listed := httpx.Summarise(ve.Problems)
		problems := make([]map[string]any, len(listed))
		for i, p := range listed {
			problems[i] = map[string]any{"field": p.Path(), "message": p.Message}
			if p.StepIndex >= 0 {
				problems[i]["step_index"], problems[i]["step_name"] = p.StepIndex, p.StepName
			}
		}
		e = e.WithDetail("problems", problems).WithDetail("problem_count", len(ve.Problems))
	}
	if fe.StepIndex >= 0 {
		e = e.WithDetail("step_index", fe.StepIndex).WithDetail("step_name", fe.StepName)
	}
	return e
}

func (h *handlers) listPipelines(c echo.Context) error {
	recs, err := h.store.ListSchemas(c.Request().Context(), "", listLimit)
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"pipelines": nonNil(recs)})
}

func (h *handlers) listPipelineVersions(c echo.Context) error {
	recs, err := h.store.ListSchemas(c.Request().Context(), c.Param("name"), listLimit)
	if err != nil {
		return httpx.FromStore(err)
	}
	if len(recs) == 0 {
		return httpx.NotFound("pipeline " + c.Param("name"))
	}
	return c.JSON(http.StatusOK, map[string]any{"name": c.Param("name"), "versions": recs})
}

func (h *handlers) getPipeline(c echo.Context) error {
	rec, err := h.store.GetSchema(c.Request().Context(), c.Param("name"), c.Param("version"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("pipeline " + c.Param("name") + " version " + c.Param("version"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, rec)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
