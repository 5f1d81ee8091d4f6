package pipeline

import (
	"errors"
	"slices"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// TestRetryPoliciesLeaveRefusalsAlone: the admission's (and redrive admission's) retry policy
// retries no non-retryable kind of pipeline.Refusals, and names them in the table's order, so the
// policy is the same on every worker.
func TestRetryPoliciesLeaveRefusalsAlone(t *testing.T) {
	var want []string
	for _, k := range pipeline.Refusals {
		if !k.Retryable {
			want = append(want, k.Type)
		}
	}
	got := bookkeepingOptions.RetryPolicy.NonRetryableErrorTypes
	if !slices.Equal(got, want) {
		t.Fatalf("bookkeeping NonRetryableErrorTypes = %v, want the table's non-retryable types %v", got, want)
	}
	for _, typ := range []string{pipeline.ErrTypeInvalidInput, pipeline.ErrTypeUnknownPipeline, pipeline.ErrTypeQuotaExhausted} {
		if !slices.Contains(got, typ) {
			t.Errorf("the admission retries %s", typ)
		}
	}
}

// TestEveryRefusalEndsTheRunAndReachesTheClient: the workflow recognises each kind the admission
// activity raises, ends its run with it, and the client turns that failure back into the kind's
// sentinel (also from the admission query's copy, for a retried request).
func TestEveryRefusalEndsTheRunAndReachesTheClient(t *testing.T) {
	fc := temporal.GetDefaultFailureConverter()
	for _, k := range pipeline.Refusals {
		raised := pipeline.RefuseAs(k.Sentinel, "refused", pipeline.InputRefusal{Field: "input_data.a"})
		f := refusalOf(fc.FailureToError(fc.ErrorToFailure(raised)))
		if f == nil || f.Type != k.Type || f.Field != "input_data.a" {
			t.Errorf("%s: the workflow's refusal is %+v", k.Type, f)
			continue
		}
		err := refusalOr(fc.FailureToError(fc.ErrorToFailure(f.Error())), "start %s", "t1")
		var re *pipeline.RefusalError
		if !errors.Is(err, k.Sentinel) || !errors.As(err, &re) || re.Field != "input_data.a" {
			t.Errorf("%s: the client's error %v is not the kind's sentinel naming the field", k.Type, err)
		}
	}
	if err := refusalOr(errors.New("unavailable"), "start %s", "t1"); pipeline.AsRefusal(err) != nil || err.Error() != "start t1: unavailable" {
		t.Errorf("an error that is no refusal came back as %v", err)
	}
}
