package entry

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/entry"
)

// TestEveryRefusalHasItsAnswer holds the API's answer to each kind of entry.Refusals a request is
// answered with: status, code, message and details, as the apply and operator routes have always
// answered them. Each such kind has its row here; a kind without one fails.
func TestEveryRefusalHasItsAnswer(t *testing.T) {
	unknown := fmt.Errorf("%w: no pipeline %q", entry.ErrUnknownWorkflow, "nope")
	notSuspended := fmt.Errorf("resume task t1 in status running: %w", entry.ErrNotSuspended)
	cases := map[error]httpx.Error{
		&entry.FieldError{Field: "retryMax", Message: "must be at most 5"}: {Status: http.StatusBadRequest, Code: "VALIDATION_ERROR",
			Message: `field "retryMax" must be at most 5`, Details: map[string]any{"field": "retryMax"}},
		unknown: {Status: http.StatusNotFound, Code: "RESOURCE_NOT_FOUND", Message: "workflow not found",
			Details: map[string]any{"field": "workflowId", "reason": unknown.Error()}},
		fmt.Errorf("get t1: %w", entry.ErrNotFound): {Status: http.StatusNotFound, Code: "RESOURCE_NOT_FOUND", Message: "task not found"},
		notSuspended: {Status: http.StatusConflict, Code: "CONFLICT", Message: notSuspended.Error()},
	}
	answered := 0
	for _, k := range entry.Refusals {
		if k.HTTPStatus != 0 {
			answered++
		}
	}
	if answered != len(cases) {
		t.Errorf("%d refusal kinds have an HTTP answer, %d rows here: give every kind its row", answered, len(cases))
	}
	for err, want := range cases {
		got, ok := refusalAnswer(err)
		if !ok || got.Status != want.Status || got.Code != want.Code || got.Message != want.Message || !maps.Equal(got.Details, want.Details) {
			t.Errorf("answer to %v: %+v, want %+v", err, got, want)
		}
	}
}

// TestRefusalAnswerLeavesOtherErrors: a refusal no request is answered with (Telegram's) and an
// error that is no refusal are left to the other mappings.
func TestRefusalAnswerLeavesOtherErrors(t *testing.T) {
	for _, err := range []error{fmt.Errorf("send: %w", entry.ErrRejected), errors.New("mongo: connection reset")} {
		if e, ok := refusalAnswer(err); ok {
			t.Errorf("%v answered as %+v", err, e)
		}
	}
}
