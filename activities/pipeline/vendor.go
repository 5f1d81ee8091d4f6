package pipeline

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// PipelineCallSync runs a sync_api step against one provider: render the input, POST it, map the
// response, and record the step in one write (RecordStep: provider, input, output, started_at,
// completed_at and the vendor calls, which the health check reads from the row), so a sync step
// costs one activity and one Mongo write. While the call runs, the workflow's state and
// waiting_for show the step processing; the row shows it pending. With req.Sync it also chooses
// the next step's providers (through the health cache) and, on the last step, records the task's
// end (pipeline.EndTask, as PipelineFinishTask does on the workflow's other paths).
//
// Idempotency: the step write is guarded by the open statuses (a recorded step is never changed
// again), the finish by the task's status and the quota's open_tasks. A retried attempt reads the
// step first: a step recorded by an attempt that crashed before finishing the task is not called
// again, its recorded output is used. A vendor call that is retried is the retry policy the
// schema asked for.
func (a *Activities) PipelineCallSync(ctx context.Context, req pipeline.CallRequest) (*pipeline.CallResult, error) {
	return a.callSync(ctx, req, activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1)
}

// callSync is PipelineCallSync; retried says an earlier attempt may have recorded the step.
func (a *Activities) callSync(ctx context.Context, req pipeline.CallRequest, retried bool) (*pipeline.CallResult, error) {
	res, err := a.recordedCall(ctx, req, retried)
	if err != nil {
		return nil, err
	}
	if res == nil {
		if res, err = a.callAndRecord(ctx, req); err != nil {
			return nil, err
		}
	}
	if req.Sync == nil {
		return res, nil
	}
	if f := req.Sync.Finish; f != nil {
		if err := pipeline.EndTask(ctx, a.Store, a.Metrics, *f); err != nil {
			return nil, err
		}
	}
	if len(req.Sync.NextCandidates) > 0 {
		if res.Next, err = a.choose(ctx, req.Sync.NextCandidates); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// recordedCall is the step's recorded success when an earlier attempt of this activity wrote it
// (nil otherwise); a first attempt reads nothing.
func (a *Activities) recordedCall(ctx context.Context, req pipeline.CallRequest, retried bool) (*pipeline.CallResult, error) {
	if !retried {
		return nil, nil
	}
	st, err := a.Store.GetStep(ctx, req.TaskID, req.StepIndex)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Status != pipeline.StatusSuccess || st.ProviderRef != req.ProviderRef {
		return nil, nil
	}
	return &pipeline.CallResult{ProviderRef: st.ProviderRef, Input: st.Input, Output: st.Output}, nil
}

// callAndRecord calls the provider and records the finished step. The calls a failed attempt
// made go to provider_calls (the step has no row to keep them yet).
func (a *Activities) callAndRecord(ctx context.Context, req pipeline.CallRequest) (*pipeline.CallResult, error) {
	p, err := a.provider(ctx, req.ProviderRef)
	if err != nil {
		return nil, err
	}
	input, err := a.renderInput(req)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	lctx, calls := pipeline.WithCallLog(ctx)
	resp, err := a.guardedPost(lctx, p, p.BaseURL+req.Step.Endpoint, input, idempotencyKey(req))
	if err != nil {
		a.flushCalls(calls.Take())
		return nil, err
	}
	out, _, err := pipeline.MapOutput(req.Step.OutputMapping, resp)
	if err != nil {
		a.flushCalls(calls.Take())
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), pipeline.ErrTypeRender, nil)
	}
	if err := a.Store.RecordStep(ctx, pipeline.StepResult{TaskID: req.TaskID, StepIndex: req.StepIndex, ProviderRef: p.Ref,
		Input: input, Output: out, StartedAt: started, Calls: calls.Take(), Tried: req.Tried}); err != nil {
		return nil, err
	}
	return &pipeline.CallResult{ProviderRef: p.Ref, Input: input, Output: out}, nil
}

// flushCalls logs calls whose step was not recorded in provider_calls; like every call log write,
// a failure is only logged.
func (a *Activities) flushCalls(calls []pipeline.ProviderCall) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range calls {
		if err := a.Store.RecordCall(ctx, c); err != nil && a.Log != nil {
			a.Log.Warn("record provider call", "provider", c.ProviderRef, "err", err)
		}
	}
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
