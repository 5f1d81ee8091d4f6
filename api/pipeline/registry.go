package pipeline

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/pipeline"
)

type providerRequest struct {
	BaseURL    string `json:"base_url" validate:"required,http_url"`
	HealthURL  string `json:"health_url" validate:"omitempty,http_url"`
	AuthHeader string `json:"auth_header"`
	AuthValue  string `json:"auth_value"`
}

type functionRequest struct {
	InvokeURL string `json:"invoke_url" validate:"required,http_url"`
}

type healthRequest struct {
	// Status is up, down or degraded (pinned until released), or "auto" to hand the provider back
	// to the periodic health check.
	Status string `json:"status" validate:"required,oneof=up down degraded auto"`
}

// providerView is a provider with its current health; the auth value is never shown.
type providerView struct {
	*pipeline.Provider
	Health *pipeline.Health `json:"health,omitempty"`
}

func validRef(ref string) error {
	if ref == "" || len(ref) > pipeline.MaxProviderRefLen || strings.ContainsAny(ref, "/ \t") {
		return httpx.Validation("ref", "provider_ref must be 1-50 characters without '/' or spaces")
	}
	return nil
}

// checkURL refuses a URL the worker would call on the user's behalf when it points at an address
// the outbound policy refuses (loopback in prod, private, link-local, metadata…). The worker
// checks again when it connects, against what the name resolves to then.
func (h *handlers) checkURL(field, raw string) error {
	if raw == "" {
		return nil
	}
	if err := h.egress.CheckURL(raw); err != nil {
		return httpx.Validation(field, field+": "+err.Error())
	}
	return nil
}

func (h *handlers) putProvider(c echo.Context) error {
	ref := c.Param("ref")
	if err := validRef(ref); err != nil {
		return err
	}
	var req providerRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	if (req.AuthHeader == "") != (req.AuthValue == "") {
		return httpx.Validation("auth_header", "auth_header and auth_value go together")
	}
	if err := h.checkURL("base_url", req.BaseURL); err != nil {
		return err
	}
	if err := h.checkURL("health_url", req.HealthURL); err != nil {
		return err
	}
	p, err := h.store.PutProvider(c.Request().Context(), &pipeline.Provider{Ref: ref, BaseURL: strings.TrimRight(req.BaseURL, "/"),
		HealthURL: req.HealthURL, AuthHeader: req.AuthHeader, AuthValue: req.AuthValue})
	if err != nil {
		return httpx.FromStore(err)
	}
	return h.providerView(c, p)
}

func (h *handlers) getProvider(c echo.Context) error {
	p, err := h.store.GetProvider(c.Request().Context(), c.Param("ref"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("provider " + c.Param("ref"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	return h.providerView(c, p)
}

func (h *handlers) providerView(c echo.Context, p *pipeline.Provider) error {
	hs, err := h.store.GetHealth(c.Request().Context(), []string{p.Ref})
	if err != nil {
		return httpx.FromStore(err)
	}
	v := providerView{Provider: p}
	if hh, ok := hs[p.Ref]; ok {
		v.Health = &hh
	}
	return c.JSON(http.StatusOK, v)
}

func (h *handlers) listProviders(c echo.Context) error {
	ctx := c.Request().Context()
	ps, err := h.store.ListProviders(ctx)
	if err != nil {
		return httpx.FromStore(err)
	}
	hs, err := h.store.ListHealth(ctx)
	if err != nil {
		return httpx.FromStore(err)
	}
	byRef := make(map[string]pipeline.Health, len(hs))
	for _, x := range hs {
		byRef[x.ProviderRef] = x
	}
	out := make([]providerView, len(ps))
	for i := range ps {
		out[i] = providerView{Provider: &ps[i]}
		if x, ok := byRef[ps[i].Ref]; ok {
			out[i].Health = &x
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"providers": out})
}

// getHealth is one provider's provider_health row: status, measurements, pin and circuit breaker.
func (h *handlers) getHealth(c echo.Context) error {
	ref := c.Param("ref")
	hs, err := h.store.GetHealth(c.Request().Context(), []string{ref})
	if err != nil {
		return httpx.FromStore(err)
	}
	hh, ok := hs[ref]
	if !ok {
		return httpx.NotFound("provider " + ref)
	}
	return c.JSON(http.StatusOK, hh)
}

func (h *handlers) putHealth(c echo.Context) error {
	var req healthRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	status, pinned := req.Status, true
	if status == "auto" {
		status, pinned = "", false
	}
	hh, err := h.store.SetHealthManual(c.Request().Context(), c.Param("ref"), status, pinned)
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("provider " + c.Param("ref"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, hh)
}

func (h *handlers) putFunction(c echo.Context) error {
	name := c.Param("name")
	if name == "" || len(name) > pipeline.MaxNameLen || strings.ContainsAny(name, "/ \t") {
		return httpx.Validation("name", "function name must be 1-100 characters without '/' or spaces")
	}
	var req functionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if err := httpx.Validate(&req); err != nil {
		return err
	}
	if err := h.checkURL("invoke_url", req.InvokeURL); err != nil {
		return err
	}
	f, err := h.store.PutFunction(c.Request().Context(), &pipeline.Function{Name: name, InvokeURL: req.InvokeURL})
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, f)
}

func (h *handlers) getFunction(c echo.Context) error {
	f, err := h.store.GetFunction(c.Request().Context(), c.Param("name"))
	if errors.Is(err, pipeline.ErrNotFound) {
		return httpx.NotFound("function " + c.Param("name"))
	}
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, f)
}

func (h *handlers) listFunctions(c echo.Context) error {
	fs, err := h.store.ListFunctions(c.Request().Context())
	if err != nil {
		return httpx.FromStore(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"functions": nonNil(fs)})
}
