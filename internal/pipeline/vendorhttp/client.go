// Package vendorhttp is the pipelines' HTTP client for vendor APIs, SCF functions and provider
// health URLs. It sends one JSON request per call, records every call for the health check and
// turns a vendor's answer into the activity errors PipelineWorkflow decides on.
package vendorhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

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

// Client sends vendor requests. HTTP bounds each request (PIPELINE_HTTP_TIMEOUT_CAP).
type Client struct {
	HTTP    *http.Client
	Calls   CallRecorder
	Metrics *pipelineprom.Metrics
	Log     *slog.Logger
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

// Probe reports whether a GET of healthURL answers 2xx within probeTimeout.
func (c *Client) Probe(ctx context.Context, healthURL string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return false
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// do sends one JSON request to a provider, records the call for the health check, and classifies
// failures: transport errors, 5xx, 408 and 429 are retryable; other 4xx are the vendor refusing
// the request (non-retryable for this provider).
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
	doc, err := c.send(req, p.Ref)
	c.observe(p.Ref, start, err == nil)
	return doc, err
}

// send performs the request and decodes a 2xx JSON answer.
func (c *Client) send(req *http.Request, ref string) (any, error) {
	resp, err := c.HTTP.Do(req)
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
		return nil, temporal.NewNonRetryableApplicationError(msg, pipeline.ErrTypeVendorRejected, nil)
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
func (c *Client) observe(ref string, start time.Time, ok bool) {
	elapsed := time.Since(start)
	c.Metrics.VendorCall(ref, ok, elapsed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.Calls.RecordCall(ctx, pipeline.ProviderCall{ProviderRef: ref, At: start.UTC(), OK: ok, DurationMS: elapsed.Milliseconds()})
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
