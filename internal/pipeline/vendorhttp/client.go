// Package vendorhttp is the pipelines' HTTP client for vendor APIs, SCF functions and provider
// health URLs. It sends one JSON request per call, records every call for the health check and
// turns a vendor's answer into the activity errors PipelineWorkflow decides on: one error type
// per class of failure (pipeline.ClassifyStatus; docs/pipelines.md "Vendor failures"), with the vendor's
// Retry-After as Temporal's next retry delay.
package vendorhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/egress"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
)

// maxResponseBytes bounds what we read from a vendor (a mapping needs a JSON document, not a video).
const maxResponseBytes = 4 << 20

// probeTimeout bounds one health_url probe.
const probeTimeout = 5 * time.Second

// CallRecorder keeps the log of vendor calls the health check aggregates (the pipelines' store).
type CallRecorder interface {
	RecordCall(ctx context.Context, c pipeline.ProviderCall) error
}

// Client sends vendor requests. HTTP bounds each request (PIPELINE_HTTP_TIMEOUT_CAP); the worker
// builds it with egresshttp.Client, so that no call reaches an address the outbound policy
// refuses, however its URL resolves or redirects.
type Client struct {
	HTTP    *http.Client
	Calls   CallRecorder
	Metrics *pipelineprom.Metrics
	Log     *slog.Logger
	// RetryAfterMax caps the Retry-After a vendor may ask for (PIPELINE_RETRY_AFTER_MAX); zero
	// means DefaultRetryAfterMax.
	RetryAfterMax time.Duration
}

// Post sends body as JSON to target on p's behalf (its auth header, idemKey as Idempotency-Key)
// and returns the decoded JSON answer.
func (c *Client) Post(ctx context.Context, p *pipeline.Provider, target string, body any, idemKey string) (any, error) {
	return c.do(ctx, p, http.MethodPost, target, body, idemKey)
}

// Get fetches target on p's behalf and returns the decoded JSON answer.
func (c *Client) Get(ctx context.Context, p *pipeline.Provider, target string) (any, error) {
	return c.do(ctx, p, http.MethodGet, target, nil, "")
}

// Probe GETs healthURL within probeTimeout. A 429 or 503 answer's Retry-After is reported
// (capped by RetryAfterMax) so the health side can leave the provider alone that long.
func (c *Client) Probe(ctx context.Context, healthURL string) pipeline.ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return pipeline.ProbeResult{}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return pipeline.ProbeResult{}
	}
	_ = resp.Body.Close()
	res := pipeline.ProbeResult{OK: resp.StatusCode/100 == 2, StatusCode: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			res.RetryAfter = min(d, c.retryAfterMax())
		}
	}
	return res
}

// do sends one JSON request to a provider, records the call for the health check, and returns
// a failure as the activity error of its class (vendorError).
func (c *Client) do(ctx context.Context, p *pipeline.Provider, method, target string, body any, idemKey string) (any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("encode request: "+err.Error(), pipeline.ErrTypeRender, nil)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("bad URL %q: %v", target, err), pipeline.ErrTypeConfig, nil)
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
	doc, f := c.send(req, p.Ref)
	if f != nil && f.refused {
		// Not the vendor's failure, so not in its health: the outbound policy forbids the address,
		// and neither a retry nor the next provider's attempt on this URL changes that.
		return nil, temporal.NewNonRetryableApplicationError(f.msg, pipeline.ErrTypeConfig, nil)
	}
	c.observe(ctx, p.Ref, start, f)
	if f != nil {
		return nil, c.vendorError(ctx, f)
	}
	return doc, nil
}

// failure is a failed vendor call before it becomes an activity error.
type failure struct {
	class pipeline.ErrorClass
	msg   string
	// retryAfter is the answer's Retry-After, when it had a valid one (hasRetryAfter).
	retryAfter    time.Duration
	hasRetryAfter bool
	// refused: the outbound policy (egress) refused the address dialled or a redirect.
	refused bool
}

// send performs the request and decodes a 2xx JSON answer. Network errors (connection refused or
// reset, timeouts) are transient; a non-2xx answer is classified by its status; an unreadable
// 2xx is ambiguous (the vendor may have acted on the request).
func (c *Client) send(req *http.Request, ref string) (any, *failure) {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, &failure{class: pipeline.ClassTransient, msg: fmt.Sprintf("%s %s: %v", req.Method, req.URL.Redacted(), err),
			refused: errors.Is(err, egress.ErrRefused)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, &failure{class: pipeline.ClassTransient, msg: fmt.Sprintf("read response of %s: %v", req.URL, err)}
	}
	if resp.StatusCode/100 != 2 {
		f := &failure{class: pipeline.ClassifyStatus(resp.StatusCode)}
		f.retryAfter, f.hasRetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		f.msg = fmt.Sprintf("%s answered %d", ref, resp.StatusCode)
		if f.hasRetryAfter {
			f.msg += fmt.Sprintf(" (Retry-After %s)", resp.Header.Get("Retry-After"))
		}
		if s := snippet(raw); s != "" {
			f.msg += ": " + s
		}
		return nil, f
	}
	var doc any
	if len(bytes.TrimSpace(raw)) == 0 {
		return doc, nil // e.g. a 202 or 204 from an SCF invocation
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, &failure{class: pipeline.ClassAmbiguous, msg: fmt.Sprintf("%s answered non-JSON: %s", ref, snippet(raw))}
	}
	return doc, nil
}

// vendorError is the activity error of f: typed by its class (pipeline.ErrorClass.ErrType),
// non-retryable unless the class is retried, and with the vendor's Retry-After as the next retry
// delay. That delay is capped by RetryAfterMax; when it reaches past the activity's
// schedule-to-close deadline (the step's remaining time, as the workflow sets it) no attempt can
// honour it, so the error is non-retryable and the workflow moves on at once.
func (c *Client) vendorError(ctx context.Context, f *failure) error {
	opts := temporal.ApplicationErrorOptions{NonRetryable: !f.class.Retryable()}
	if f.hasRetryAfter && f.class.Retryable() {
		delay := max(min(f.retryAfter, c.retryAfterMax()), minRetryDelay)
		if left, ok := remaining(ctx); ok && delay >= left {
			opts.NonRetryable = true
			f.msg += fmt.Sprintf("; the step has %s left, less than the wait asked for", left.Round(time.Second))
		} else {
			opts.NextRetryDelay = delay
		}
	}
	return temporal.NewApplicationErrorWithOptions(f.msg, f.class.ErrType(), opts)
}

// remaining is how long the activity behind ctx may still be retried: its schedule-to-close
// deadline minus now. ok is false outside an activity or without that timeout.
func remaining(ctx context.Context) (time.Duration, bool) {
	if !activity.IsActivity(ctx) {
		return 0, false
	}
	info := activity.GetInfo(ctx)
	if info.ScheduleToCloseTimeout <= 0 {
		return 0, false
	}
	return time.Until(info.ScheduledTime.Add(info.ScheduleToCloseTimeout)), true
}

func (c *Client) retryAfterMax() time.Duration {
	if c.RetryAfterMax > 0 {
		return c.RetryAfterMax
	}
	return DefaultRetryAfterMax
}

// observe counts a call in the metrics (a failure of any class is an "error") and in the call log
// of the health check, where a hard failure counts as a good call: the vendor answered, the
// request was wrong. A caller that records its calls itself (pipeline.WithCallLog: a sync step
// keeps them on its row) gets the call there; otherwise it is inserted into provider_calls. A
// failed write must not fail the step, so it is only logged; it runs detached from the activity
// context so a cancelled call is still counted.
func (c *Client) observe(actx context.Context, ref string, start time.Time, f *failure) {
	elapsed := time.Since(start)
	c.Metrics.VendorCall(ref, f == nil, elapsed)
	up := f == nil || f.class == pipeline.ClassHard
	call := pipeline.ProviderCall{ProviderRef: ref, At: start.UTC(), OK: up, DurationMS: elapsed.Milliseconds()}
	if pipeline.LogCall(actx, call) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.Calls.RecordCall(ctx, call)
	if err != nil && c.Log != nil {
		c.Log.Warn("record provider call", "provider", ref, "err", err)
	}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
