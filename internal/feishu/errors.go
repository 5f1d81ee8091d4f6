package feishu

import (
	"errors"
	"fmt"
	"net/http"
)

// Feishu response codes the client reacts to.
const (
	CodeTooManyRequest     = 1254290  // bitable: request too fast
	CodeWriteConflict      = 1254291  // bitable: concurrent writes to one base
	CodeDataNotReady       = 1254607  // bitable: data not ready, retryable
	CodeInvalidFilter      = 1254018  // bitable: InvalidFilter
	CodeFilterTooLong      = 1254107  // bitable: FilterLengthExceedLimit (JSON filter > 2,000 characters)
	CodeGatewayRateLimit   = 99991400 // gateway: request trigger frequency limit
	CodeTokenMissing       = 99991661
	CodeTokenInvalid       = 99991663
	CodeTenantTokenInvalid = 99991664
	CodeTokenBadFormat     = 99991671
)

// APIError is a non-zero Feishu answer. Explanation carries the diagnosis the client could
// add (for InvalidFilter: which field lacks which option).
type APIError struct {
	Op          string
	Code        int
	Msg         string
	HTTPStatus  int
	LogID       string
	Explanation string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("feishu %s: code=%d msg=%s", e.Op, e.Code, e.Msg)
	if e.HTTPStatus != 0 && e.HTTPStatus != http.StatusOK {
		s += fmt.Sprintf(" http=%d", e.HTTPStatus)
	}
	if e.LogID != "" {
		s += " log_id=" + e.LogID
	}
	if e.Explanation != "" {
		s += ": " + e.Explanation
	}
	return s
}

// Retryable reports answers that succeed when repeated later: rate limits and write conflicts.
func (e *APIError) Retryable() bool {
	switch e.Code {
	case CodeTooManyRequest, CodeWriteConflict, CodeDataNotReady, CodeGatewayRateLimit:
		return true
	}
	return e.HTTPStatus == http.StatusTooManyRequests
}

func (e *APIError) tokenRejected() bool {
	switch e.Code {
	case CodeTokenInvalid, CodeTenantTokenInvalid, CodeTokenBadFormat:
		return true
	}
	return false
}

// InvalidFilter reports Feishu's 1254018 answer. It is a method, not an IsInvalidFilter(err)
// helper, so that packages which must not import this one (it links the Feishu SDK and
// net/http), such as the webhook activities, can test for it through
// interface{ InvalidFilter() bool }.
func (e *APIError) InvalidFilter() bool { return e.Code == CodeInvalidFilter }

// IsRetryable reports whether err is a Feishu answer worth repeating later.
func IsRetryable(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Retryable()
}
