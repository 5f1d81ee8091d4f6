package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
)

// errorHandler renders every error in the one error envelope (docs/api.md). Client mistakes and
// dependency outages get their own codes; only a bug is a 500, and it is logged.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		e := toHTTP(err)
		if e.Status >= 500 && e.Status != http.StatusServiceUnavailable {
			log.Error("request failed", "method", c.Request().Method, "path", c.Path(),
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
		}
		h := c.Response().Header()
		if e.RetryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+999_999_999)/1_000_000_000)))
		}
		for k, v := range e.Headers {
			h.Set(k, v)
		}
		body := map[string]any{"success": false, "error": e, "timestamp": httpx.Timestamp()}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(e.Status)
			return
		}
		_ = c.JSON(e.Status, body)
	}
}

func toHTTP(err error) *httpx.Error {
	var he *httpx.Error
	if errors.As(err, &he) {
		return he
	}
	var ee *echo.HTTPError
	if errors.As(err, &ee) {
		return fromEcho(ee)
	}
	for _, m := range []func(error) error{httpx.FromAuth, httpx.FromStore, httpx.FromTemporal} {
		if errors.As(m(err), &he) {
			return he
		}
	}
	return httpx.New(http.StatusInternalServerError, "INTERNAL_ERROR", "internal error; see the server log for this request id")
}

func fromEcho(ee *echo.HTTPError) *httpx.Error {
	switch ee.Code {
	case http.StatusNotFound:
		return httpx.NotFound("route")
	case http.StatusMethodNotAllowed:
		return httpx.New(ee.Code, "METHOD_NOT_ALLOWED", "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return httpx.New(ee.Code, "PAYLOAD_TOO_LARGE", "request body is larger than the limit")
	case http.StatusUnsupportedMediaType:
		return httpx.New(ee.Code, "UNSUPPORTED_MEDIA_TYPE", "send Content-Type: application/json")
	case http.StatusTooManyRequests:
		return httpx.New(ee.Code, "RATE_LIMIT_EXCEEDED", "rate limit exceeded")
	}
	if ee.Code >= 400 && ee.Code < 500 {
		msg, _ := ee.Message.(string)
		if msg == "" {
			msg = http.StatusText(ee.Code)
		}
		return httpx.New(ee.Code, "BAD_REQUEST", msg)
	}
	return httpx.New(http.StatusInternalServerError, "INTERNAL_ERROR", "internal error")
}
