package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	domain "github.com/taskloom/taskloom/internal/pipeline"
)

// maxResponseBytes bounds what we read from a vendor (a mapping needs a JSON document, not a video).
const maxResponseBytes = 4 << 20

// CallSync runs a sync_api step against one provider: render the input, POST it, map the
// response, and record the step's success (so a sync step costs the workflow one activity).
// Idempotency: the step row is updated with conditional writes (a finished step is never changed
// again); a vendor call that is retried is the retry policy the schema asked for.
func (a *Activities) CallSync(ctx context.Context, req domain.CallRequest) (*domain.CallResult, error) {
	ref, input, out, err := a.postStep(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := a.Store.FinishStep(ctx, req.TaskID, req.StepIndex, domain.StatusSuccess, ref, out, ""); err != nil {
		return nil, err
	}
	return &domain.CallResult{ProviderRef: ref, Input: input, Output: out}, nil
}

// postStep renders a step's input, marks the step processing, POSTs the input to the provider's
// endpoint and maps the answer through output_mapping. It returns the provider that served.
func (a *Activities) postStep(ctx context.Context, req domain.CallRequest) (ref string, input, out map[string]any, err error) {
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
	resp, err := a.do(ctx, p, http.MethodPost, p.BaseURL+req.Step.Endpoint, input, idempotencyKey(req))
	if err != nil {
		return "", nil, nil, err
	}
	if out, _, err = domain.MapOutput(req.Step.OutputMapping, resp); err != nil {
		return "", nil, nil, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeRender, nil)
	}
	return p.Ref, input, out, nil
}

// SubmitAsync creates the vendor job of an async_api step. Guard: the vendor task id stored on the
// step row; a retried or replayed submit for the same provider returns it instead of creating a
// second job. The request also carries an Idempotency-Key for vendors that honour one.
func (a *Activities) SubmitAsync(ctx context.Context, req domain.CallRequest) (*domain.SubmitResult, error) {
	if st, err := a.Store.GetStep(ctx, req.TaskID, req.StepIndex); err == nil && st.VendorTaskID != "" && st.ProviderRef == req.ProviderRef {
		return &domain.SubmitResult{ProviderRef: st.ProviderRef, Input: st.Input, VendorTaskID: st.VendorTaskID,
			Output: map[string]any{"vendor_task_id": st.VendorTaskID}}, nil
	}
	ref, input, out, err := a.postStep(ctx, req)
	if err != nil {
		return nil, err
	}
	vid := textOf(out["vendor_task_id"])
	if vid == "" && strings.Contains(req.Step.Polling.StatusEndpoint, "{vendor_task_id}") {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s returned no vendor_task_id (output_mapping.vendor_task_id = %s)",
			ref, req.Step.OutputMapping["vendor_task_id"]), domain.ErrTypeVendorRejected, nil)
	}
	if err := a.Store.SetVendorTask(ctx, req.TaskID, req.StepIndex, ref, vid); err != nil {
		return nil, err
	}
	return &domain.SubmitResult{ProviderRef: ref, Input: input, VendorTaskID: vid, Status: textOf(out["status"]), Output: out}, nil
}

// PollAsync asks the vendor for a job's status. Read-only at the vendor.
func (a *Activities) PollAsync(ctx context.Context, req domain.PollRequest) (*domain.PollResult, error) {
	p, err := a.provider(ctx, req.ProviderRef)
	if err != nil {
		return nil, err
	}
	path := strings.ReplaceAll(req.Step.Polling.StatusEndpoint, "{vendor_task_id}", url.PathEscape(req.VendorTaskID))
	resp, err := a.do(ctx, p, http.MethodGet, p.BaseURL+path, nil, "")
	if err != nil {
		return nil, err
	}
	out, _, err := domain.MapOutput(req.Step.OutputMapping, resp)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeRender, nil)
	}
	return &domain.PollResult{Status: textOf(out["status"]), Output: out}, nil
}

func idempotencyKey(req domain.CallRequest) string {
	return fmt.Sprintf("%s:%d:%s", req.TaskID, req.StepIndex, req.ProviderRef)
}

// do sends one JSON request to a provider, records the call for the health check, and classifies
// failures: transport errors, 5xx, 408 and 429 are retryable; other 4xx are the vendor refusing
// the request (non-retryable for this provider).
func (a *Activities) do(ctx context.Context, p *domain.Provider, method, target string, body any, idemKey string) (any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("encode request: "+err.Error(), domain.ErrTypeRender, nil)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("bad URL %q: %v", target, err), domain.ErrTypeConfig, nil)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	if p.AuthHeader != "" {
		req.Header.Set(p.AuthHeader, p.AuthValue)
	}
	start := time.Now()
	doc, err := a.send(req, p.Ref)
	a.observe(p.Ref, start, err == nil)
	return doc, err
}

// send performs the request and decodes a 2xx JSON answer.
func (a *Activities) send(req *http.Request, ref string) (any, error) {
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("read response of %s: %w", req.URL, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := fmt.Sprintf("%s answered %d: %s", ref, resp.StatusCode, snippet(raw))
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests {
			return nil, temporal.NewApplicationError(msg, "VendorUnavailable")
		}
		return nil, temporal.NewNonRetryableApplicationError(msg, domain.ErrTypeVendorRejected, nil)
	}
	var doc any
	if len(bytes.TrimSpace(raw)) == 0 {
		return doc, nil // e.g. a 202 or 204 from an SCF invocation
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, temporal.NewApplicationError(fmt.Sprintf("%s answered non-JSON: %s", ref, snippet(raw)), "VendorBadResponse")
	}
	return doc, nil
}

// observe counts a call in the metrics and in provider_calls (for the health check). A failed
// write must not fail the step, so it is only logged; it runs detached from the activity context
// so a cancelled call is still counted.
func (a *Activities) observe(ref string, start time.Time, ok bool) {
	elapsed := time.Since(start)
	outcome := "ok"
	if !ok {
		outcome = "error"
	}
	a.Metrics.VendorCalls.WithLabelValues(ref, outcome).Inc()
	a.Metrics.VendorLatency.WithLabelValues(ref).Observe(elapsed.Seconds())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := a.Store.RecordCall(ctx, domain.ProviderCall{ProviderRef: ref, At: start.UTC(), OK: ok, DurationMS: elapsed.Milliseconds()})
	if err != nil && a.Log != nil {
		a.Log.Warn("record provider call", "provider", ref, "err", err)
	}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
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
