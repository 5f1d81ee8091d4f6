package pipeline

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// PipelineCallSync runs a sync_api step against one provider: render the input, POST it, map the
// response, and record the step's success (so a sync step costs the workflow one activity).
// Idempotency: the step row is updated with conditional writes (a finished step is never changed
// again); a vendor call that is retried is the retry policy the schema asked for.
func (a *Activities) PipelineCallSync(ctx context.Context, req pipeline.CallRequest) (*pipeline.CallResult, error) {
	ref, input, out, err := a.postStep(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := a.Store.FinishStep(ctx, req.TaskID, req.StepIndex, pipeline.StatusSuccess, ref, out, ""); err != nil {
		return nil, err
	}
	return &pipeline.CallResult{ProviderRef: ref, Input: input, Output: out}, nil
}

// postStep renders a step's input, marks the step processing, POSTs the input to the provider's
// endpoint (behind its circuit breaker) and maps the answer through output_mapping. It returns the provider that served.
func (a *Activities) postStep(ctx context.Context, req pipeline.CallRequest) (ref string, input, out map[string]any, err error) {
	p, err := a.provider(ctx, req.ProviderRef)
	if err != nil {
		return "", nil, nil, err
	}
	if input, err = a.renderInput(req); err != nil {
		return "", nil, nil, err
	}
	if err := a.Store.StartStep(ctx, req.TaskID, req.StepIndex, p.Ref, input); err != nil {
		return "", nil, nil, err
	}
	resp, err := a.guardedPost(ctx, p, p.BaseURL+req.Step.Endpoint, input, idempotencyKey(req))
	if err != nil {
		return "", nil, nil, err
	}
	if out, _, err = pipeline.MapOutput(req.Step.OutputMapping, resp); err != nil {
		return "", nil, nil, temporal.NewNonRetryableApplicationError(err.Error(), pipeline.ErrTypeRender, nil)
	}
	return p.Ref, input, out, nil
}

// PipelineSubmitAsync creates the vendor job of an async_api step. Guard: the vendor task id stored
// on the step row; a retried or replayed submit for the same provider returns it instead of
// creating a second job. The request also carries an Idempotency-Key for vendors that honour one.
func (a *Activities) PipelineSubmitAsync(ctx context.Context, req pipeline.CallRequest) (*pipeline.SubmitResult, error) {
	if st, err := a.Store.GetStep(ctx, req.TaskID, req.StepIndex); err == nil && st.VendorTaskID != "" && st.ProviderRef == req.ProviderRef {
		return &pipeline.SubmitResult{ProviderRef: st.ProviderRef, Input: st.Input, VendorTaskID: st.VendorTaskID,
			Output: map[string]any{"vendor_task_id": st.VendorTaskID}}, nil
	}
	ref, input, out, err := a.postStep(ctx, req)
	if err != nil {
		return nil, err
	}
	vid := textOf(out["vendor_task_id"])
	if vid == "" && strings.Contains(req.Step.Polling.StatusEndpoint, "{vendor_task_id}") {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s returned no vendor_task_id (output_mapping.vendor_task_id = %s)",
			ref, req.Step.OutputMapping["vendor_task_id"]), pipeline.ErrTypeVendorRejected, nil)
	}
	if err := a.Store.SetVendorTask(ctx, req.TaskID, req.StepIndex, ref, vid); err != nil {
		return nil, err
	}
	return &pipeline.SubmitResult{ProviderRef: ref, Input: input, VendorTaskID: vid, Status: textOf(out["status"]), Output: out}, nil
}

// PipelinePollAsync asks the vendor for a job's status. Read-only at the vendor.
func (a *Activities) PipelinePollAsync(ctx context.Context, req pipeline.PollRequest) (*pipeline.PollResult, error) {
	p, err := a.provider(ctx, req.ProviderRef)
	if err != nil {
		return nil, err
	}
	path := strings.ReplaceAll(req.Step.Polling.StatusEndpoint, "{vendor_task_id}", url.PathEscape(req.VendorTaskID))
	resp, err := a.Vendors.Get(ctx, p, p.BaseURL+path)
	if err != nil {
		return nil, err
	}
	out, _, err := pipeline.MapOutput(req.Step.OutputMapping, resp)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), pipeline.ErrTypeRender, nil)
	}
	return &pipeline.PollResult{Status: textOf(out["status"]), Output: out}, nil
}

func idempotencyKey(req pipeline.CallRequest) string {
	if req.Redrive > 0 {
		return fmt.Sprintf("%s:%d:%s:r%d", req.TaskID, req.StepIndex, req.ProviderRef, req.Redrive)
	}
	return fmt.Sprintf("%s:%d:%s", req.TaskID, req.StepIndex, req.ProviderRef)
}

// textOf renders a mapped scalar (a vendor may send an id as a number) as text.
func textOf(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return fmt.Sprintf("%.0f", t)
	default:
		return fmt.Sprint(t)
	}
}
