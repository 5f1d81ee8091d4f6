package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// TestDeliverCallbackTellsMissingFromUnknown: after the update's NotFound, a describe that finds
// the execution means closed (409), one that answers NotFound means no task (404), and one that
// fails otherwise is Temporal's error (503 at the API), never a 404 that ends the vendor's retries.
func TestDeliverCallbackTellsMissingFromUnknown(t *testing.T) {
	unavailable := serviceerror.NewUnavailable("frontend down")
	for name, tc := range map[string]struct {
		describeErr error
		want        error
	}{
		"closed":      {nil, ErrNotRunning},
		"no such":     {serviceerror.NewNotFound("no workflow"), pipeline.ErrNotFound},
		"unavailable": {unavailable, unavailable},
	} {
		t.Run(name, func(t *testing.T) {
			fake := &mocks.Client{}
			fake.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(nil, serviceerror.NewNotFound("workflow not found"))
			fake.On("DescribeWorkflowExecution", mock.Anything, WorkflowID("t1"), "").
				Return(&workflowservice.DescribeWorkflowExecutionResponse{}, tc.describeErr)
			err := (&Client{Temporal: fake}).DeliverCallback(context.Background(), "t1", pipeline.CallbackDelivery{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if name == "unavailable" && (errors.Is(err, pipeline.ErrNotFound) || errors.Is(err, ErrNotRunning)) {
				t.Fatalf("a failed describe was taken for an answer: %v", err)
			}
		})
	}
}
