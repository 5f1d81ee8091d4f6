package pipeline

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// defaultCallbackURL is the API's callback route; callback_config.url may override it.
const defaultCallbackURL = "${backend_url}/api/internal/tasks/${task_id}/steps/${step_index}/callback"

// scfInvocation is the body an SCF function receives.
type scfInvocation struct {
	TaskID      string         `json:"task_id"`
	StepIndex   int            `json:"step_index"`
	Input       map[string]any `json:"input"`
	CallbackURL string         `json:"callback_url"`
}

// PipelineInvokeSCF starts the step's SCF function. The step is opened for its callback before the
// request, so a fast function's callback is not refused. Guard: invoked_at on the step row; a
// retried activity after a successful invocation does not invoke again.
func (a *Activities) PipelineInvokeSCF(ctx context.Context, req pipeline.CallRequest) (*pipeline.InvokeResult, error) {
	if st, err := a.Store.GetStep(ctx, req.TaskID, req.StepIndex); err == nil && st.InvokedAt != nil {
		return &pipeline.InvokeResult{Input: st.Input}, nil
	}
	fn, err := a.Store.GetFunction(ctx, req.Step.SCFFunction)
	if isNotFound(err) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("function %q is not registered", req.Step.SCFFunction), pipeline.ErrTypeConfig, nil)
	}
	if err != nil {
		return nil, err
	}
	input, err := a.renderInput(req)
	if err != nil {
		return nil, err
	}
	tmpl := defaultCallbackURL
	if cc := req.Step.CallbackConfig; cc != nil && cc.URL != "" {
		tmpl = cc.URL
	}
	cb, err := pipeline.RenderString(tmpl, a.scope(req))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("callback_config.url: "+err.Error(), pipeline.ErrTypeRender, nil)
	}
	if err := a.Store.StartStep(ctx, req.TaskID, req.StepIndex, "", input); err != nil {
		return nil, err
	}
	if err := a.Store.AwaitCallback(ctx, req.TaskID, req.StepIndex); err != nil {
		return nil, err
	}
	fnAsProvider := &pipeline.Provider{Ref: "scf:" + fn.Name}
	if _, err := a.Vendors.Post(ctx, fnAsProvider, fn.InvokeURL,
		scfInvocation{TaskID: req.TaskID, StepIndex: req.StepIndex, Input: input, CallbackURL: cb}, idempotencyKey(req)); err != nil {
		return nil, err
	}
	if err := a.Store.MarkInvoked(ctx, req.TaskID, req.StepIndex); err != nil {
		return nil, err
	}
	return &pipeline.InvokeResult{Input: input, CallbackURL: cb}, nil
}
