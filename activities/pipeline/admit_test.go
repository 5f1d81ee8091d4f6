package pipeline

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// An input_data the store could never record (10,000 levels deep) is refused by admission at
// once, as a non-retryable invalid input naming where it goes too deep, before any MongoDB
// command: retried, it would fail the same way for ever while the creating request waits.
func TestAdmitRefusesTooDeepInputWithoutRetry(t *testing.T) {
	a, ctx := monitoredActivities(t)
	input := map[string]any{"leaf": 1}
	for range 10_000 {
		input = map[string]any{"a": input}
	}
	tctx, tally := mongox.WithTally(ctx)
	_, err := a.PipelineAdmitTask(tctx, pipeline.AdmitRequest{TaskID: pipeline.NewTaskID(), RunID: "r", UserID: "u", FeatureID: "f",
		Pipeline: "basic_clean_pipeline", InputData: input, RequestHash: "h"})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeInvalidInput || !ae.NonRetryable() {
		t.Fatalf("admission answered %v; want a non-retryable %s", err, pipeline.ErrTypeInvalidInput)
	}
	var refusal pipeline.InputRefusal
	if err := ae.Details(&refusal); err != nil || !strings.HasPrefix(refusal.Field, "input_data.a.a") {
		t.Errorf("refusal names %q (%v); want the input_data path", refusal.Field, err)
	}
	if tally.Total() != 0 {
		t.Errorf("the refusal cost %s", tally)
	}
}
