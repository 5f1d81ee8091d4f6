// Package httpx holds what every taskloom HTTP handler shares: the error envelope, request
// binding that names the offending field, success envelopes, and the mapping of store errors to
// statuses. Handlers return *Error values; the API's error handler renders them.
package httpx

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Error is an HTTP error in the envelope
// {"success":false,"error":{"code","message","details"},"timestamp"}.
type Error struct {
	Status  int            `json:"-"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// RetryAfter, when set, becomes the Retry-After header (429 and 503).
	RetryAfter time.Duration `json:"-"`
	// Headers are extra response headers (e.g. rate-limit counters).
	Headers map[string]string `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// WithDetail returns e with one more detail entry.
func (e *Error) WithDetail(k string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[k] = v
	return e
}

// New builds an error with any status and code.
func New(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// Validation is a 400 naming the field that is wrong.
func Validation(field, msg string) *Error {
	e := New(http.StatusBadRequest, "VALIDATION_ERROR", msg)
	if field != "" {
		e = e.WithDetail("field", field)
	}
	return e
}

// Unauthorized is a 401 for a missing, unknown or inactive credential.
func Unauthorized(msg string) *Error { return New(http.StatusUnauthorized, "INVALID_API_KEY", msg) }

// Forbidden is a 403 for a credential that lacks a permission or project.
func Forbidden(msg string) *Error { return New(http.StatusForbidden, "FORBIDDEN", msg) }

// NotFound is a 404 for the named resource.
func NotFound(what string) *Error {
	return New(http.StatusNotFound, "RESOURCE_NOT_FOUND", what+" not found")
}

// Conflict is a 409.
func Conflict(msg string) *Error { return New(http.StatusConflict, "CONFLICT", msg) }

// Gone is a 410 for a resource that existed and was deleted.
func Gone(msg string) *Error { return New(http.StatusGone, "GONE", msg) }

// TooMany is a 429 with Retry-After.
func TooMany(retryAfter time.Duration) *Error {
	e := New(http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "rate limit exceeded, retry after "+retryAfterSeconds(retryAfter)+"s")
	e.RetryAfter = retryAfter
	return e
}

// Unavailable is a 503 for a dependency that does not answer.
func Unavailable(dep string, retryAfter time.Duration) *Error {
	e := New(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", dep+" is unavailable, retry later")
	e.RetryAfter = retryAfter
	return e.WithDetail("dependency", dep)
}

func retryAfterSeconds(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.Itoa(s)
}

// MaxProblemsListed is how many problems one error body lists. A request with thousands of bad
// elements gets the first of them and a count, not an answer as large as the request.
const MaxProblemsListed = 20

// Summarise is the part of problems an error body lists (the first MaxProblemsListed); the
// caller reports len(problems) beside it.
func Summarise[T any](problems []T) []T { return problems[:min(len(problems), MaxProblemsListed)] }
