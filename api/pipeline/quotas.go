package pipeline

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/pipeline"
)

type quotaRequest struct {
	Remaining *int `json:"remaining" validate:"required,min=0,max=1000000000"`
}

func (h *handlers) putQuota(c echo.Context) error {
	var req quotaRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	q, err := h.store.SetQuota(c.Request().Context(), c.Param("user_id"), c.Param("feature_id"), *req.Remaining)
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, q)
}

func (h *handlers) getQuota(c echo.Context) error {
	q, err := h.store.GetQuota(c.Request().Context(), c.Param("user_id"), c.Param("feature_id"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("quota of user " + c.Param("user_id") + " for feature " + c.Param("feature_id"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, q)
}
