package pipeline

import (
	"errors"
	"net/http"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// TestEveryRefusalRoundTrips follows each kind of pipeline.Refusals from the activity (or update
// validator) that raises it, across Temporal's failure encoding, to the client's error (its
// sentinel) and the API's answer. Each kind has its row here; a kind without one fails.
func TestEveryRefusalRoundTrips(t *testing.T) {
	want := map[string]struct {
		sentinel error
		status   int
		code     string
	}{
		pipeline.ErrTypeUnknownPipeline:     {pipeline.ErrNotFound, http.StatusNotFound, "RESOURCE_NOT_FOUND"},
		pipeline.ErrTypeInvalidInput:        {pipeline.ErrInvalidInput, http.StatusBadRequest, "VALIDATION_ERROR"},
		pipeline.ErrTypeQuotaExhausted:      {pipeline.ErrQuotaExhausted, http.StatusPaymentRequired, "QUOTA_EXHAUSTED"},
		pipeline.ErrTypeIdempotencyConflict: {pipeline.ErrIdempotencyConflict, http.StatusConflict, "IDEMPOTENCY_CONFLICT"},
		pipeline.ErrTypeRedriveConflict:     {pipeline.ErrRedriveConflict, http.StatusConflict, "CONFLICT"},
		pipeline.ErrTypeRedriveExpired:      {pipeline.ErrRedriveExpired, http.StatusGone, "GONE"},
		pipeline.ErrTypeRedriveRepeated:     {pipeline.ErrRedriveRepeated, http.StatusConflict, "CONFLICT"},
		pipeline.ErrTypeStepNotFound:        {pipeline.ErrStepNotFound, http.StatusNotFound, "RESOURCE_NOT_FOUND"},
		pipeline.ErrTypeStepNotWaiting:      {pipeline.ErrStepNotWaiting, http.StatusConflict, "CONFLICT"},
		pipeline.ErrTypeCallbackStale:       {pipeline.ErrCallbackStale, http.StatusConflict, "CONFLICT"},
		pipeline.ErrTypeCallbackDelivered:   {pipeline.ErrCallbackDelivered, http.StatusConflict, "CONFLICT"},
	}
	if len(want) != len(pipeline.Refusals) {
		t.Errorf("%d refusal kinds, %d rows here: give every kind its row", len(pipeline.Refusals), len(want))
	}
	fc := temporal.GetDefaultFailureConverter()
	for _, k := range pipeline.Refusals {
		t.Run(k.Type, func(t *testing.T) {
			w, ok := want[k.Type]
			if !ok {
				t.Fatal("no row for this kind")
			}
			raised := pipeline.RefuseAs(w.sentinel, "refused: "+k.Type, pipeline.InputRefusal{Field: "input_data.image"})
			var ae *temporal.ApplicationError
			if !errors.As(raised, &ae) || ae.Type() != k.Type || ae.NonRetryable() == k.Retryable {
				t.Fatalf("activity error %#v: want type %s, non-retryable %v", raised, k.Type, !k.Retryable)
			}

			got := pipeline.AsRefusal(fc.FailureToError(fc.ErrorToFailure(raised)))
			if got == nil || !errors.Is(got, w.sentinel) || got.Message != "refused: "+k.Type || got.Field != "input_data.image" {
				t.Fatalf("client error %#v: want %v with message and field", got, w.sentinel)
			}
			for _, other := range pipeline.Refusals {
				if other.Type != k.Type && errors.Is(got, other.Sentinel) {
					t.Errorf("the client's error is also %s's sentinel: the HTTP layer could not tell them apart", other.Type)
				}
			}

			e, ok := refusalAnswer(got)
			if !ok || e.Status != w.status || e.Code != w.code || e.Details["reason"] != k.Type {
				t.Fatalf("HTTP answer %+v: want %d %s with reason %s", e, w.status, w.code, k.Type)
			}
			if e.Message != k.Message && e.Message != got.Message {
				t.Errorf("HTTP message %q: want the kind's or the refusal's", e.Message)
			}
		})
	}
}

// TestRefusalAnswerNamesTheInputField: a 400 names the input_data field, as every
// VALIDATION_ERROR does; an error that is no refusal is left to the other mappings.
func TestRefusalAnswerNamesTheInputField(t *testing.T) {
	kind, _ := pipeline.RefusalKindOf(pipeline.ErrInvalidInput)
	e, ok := refusalAnswer(&pipeline.RefusalError{Kind: kind, Message: "input_data.x is required", Field: "input_data.x"})
	if !ok || e.Status != http.StatusBadRequest || e.Details["field"] != "input_data.x" {
		t.Fatalf("answer %+v: want 400 naming input_data.x", e)
	}
	if _, ok := refusalAnswer(errors.New("temporal is down")); ok {
		t.Fatal("an error that is no refusal was answered as one")
	}
}
