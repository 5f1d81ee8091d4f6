package vendorhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The client types each failure by its class (one error type per class, retryable unless hard)
// and carries the vendor's Retry-After as the next retry delay; a 2xx JSON answer is decoded; the
// auth header and Idempotency-Key are sent; every call is recorded for the health check, a hard
// failure as a good one (the vendor answered).
func TestDoClassifiesVendorAnswers(t *testing.T) {
	var gotAuth, gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotKey = r.Header.Get("X-Token"), r.Header.Get("Idempotency-Key")
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"data":{"output_url":"u"}}`))
		case "/html":
			_, _ = w.Write([]byte("<html>"))
		case "/429":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
		case "/503-date":
			w.Header().Set("Retry-After", time.Now().Add(2*time.Minute).UTC().Format(http.TimeFormat))
			w.WriteHeader(503)
		case "/503-huge":
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(503)
		case "/400":
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"bad image"}`))
		default: // "/<status>"
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			w.WriteHeader(code)
		}
	}))
	defer srv.Close()
	store := pipelinedb.New(testenv.Mongo(t))
	c := &Client{HTTP: &http.Client{Timeout: 5 * time.Second}, Calls: store, Metrics: pipelineprom.New(prometheus.NewRegistry()),
		RetryAfterMax: 10 * time.Minute}
	p := &pipeline.Provider{Ref: "v", BaseURL: srv.URL, AuthHeader: "X-Token", AuthValue: "k"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	doc, err := c.Post(ctx, p, srv.URL+"/ok", map[string]any{"a": 1}, "t:0:v")
	if err != nil || doc.(map[string]any)["data"] == nil || gotAuth != "k" || gotKey != "t:0:v" {
		t.Fatalf("ok: %v %v auth=%q key=%q", doc, err, gotAuth, gotKey)
	}
	cases := []struct {
		path  string
		typ   string
		delay time.Duration // the next retry delay, 0: the retry policy's
	}{
		{"/429", pipeline.ErrTypeVendorTransient, 3 * time.Second},
		{"/503-date", pipeline.ErrTypeVendorTransient, 2 * time.Minute},
		{"/503-huge", pipeline.ErrTypeVendorTransient, 10 * time.Minute}, // RetryAfterMax
		{"/408", pipeline.ErrTypeVendorTransient, 0},
		{"/502", pipeline.ErrTypeVendorTransient, 0},
		{"/504", pipeline.ErrTypeVendorTransient, 0},
		{"/500", pipeline.ErrTypeVendorAmbiguous, 0},
		{"/html", pipeline.ErrTypeVendorAmbiguous, 0},
		{"/400", pipeline.ErrTypeVendorRejected, 0},
		{"/404", pipeline.ErrTypeVendorRejected, 0},
	}
	for _, tc := range cases {
		_, err := c.Get(ctx, p, srv.URL+tc.path)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != tc.typ || ae.NonRetryable() != (tc.typ == pipeline.ErrTypeVendorRejected) {
			t.Errorf("%s: %v, want type %s", tc.path, err, tc.typ)
			continue
		}
		if d := ae.NextRetryDelay(); d < tc.delay-time.Minute || d > tc.delay {
			t.Errorf("%s: next retry delay %s, want %s", tc.path, d, tc.delay)
		}
	}
	st, err := store.RecentCalls(ctx, "v", time.Now().Add(-time.Minute), 100)
	if err != nil || st.Calls != 1+len(cases) || st.Failures != len(cases)-2 {
		t.Fatalf("recorded calls %+v %v", st, err)
	}
}

// A connection refused and a timeout are transient; a Retry-After past the activity's
// schedule-to-close deadline cannot be honoured, so that failure is not retried.
func TestNetworkFailuresAreTransient(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer slow.Close()
	c := &Client{HTTP: &http.Client{Timeout: 100 * time.Millisecond}, Calls: discard{}, Metrics: pipelineprom.New(prometheus.NewRegistry())}
	p := &pipeline.Provider{Ref: "v"}
	for _, target := range []string{"http://127.0.0.1:1/x", slow.URL} {
		_, err := c.Get(context.Background(), p, target)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeVendorTransient || ae.NonRetryable() {
			t.Errorf("%s: %v, want a retryable %s", target, err, pipeline.ErrTypeVendorTransient)
		}
	}
}

// Within an activity, a Retry-After that reaches past its schedule-to-close deadline (the step's
// remaining time) makes the failure non-retryable; one that fits is the next retry delay.
func TestRetryAfterBeyondTheStepsTimeIsNotRetried(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := &Client{HTTP: &http.Client{Timeout: 5 * time.Second}, Calls: discard{}, Metrics: pipelineprom.New(prometheus.NewRegistry()),
		RetryAfterMax: time.Hour}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, wait string) error {
		_, err := c.Get(ctx, &pipeline.Provider{Ref: "v"}, srv.URL+"/"+wait)
		return err
	}, activity.RegisterOptions{Name: "call"})
	// The test environment schedules an activity with a schedule-to-close timeout of 10 minutes.
	for wait, retryable := range map[string]bool{"300": true, "900": false} {
		_, err := env.ExecuteActivity("call", wait)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeVendorTransient || ae.NonRetryable() == retryable {
			t.Errorf("Retry-After %s with 10 minutes left: %v (retryable want %v)", wait, err, retryable)
		}
	}
}

type discard struct{}

func (discard) RecordCall(context.Context, pipeline.ProviderCall) error { return nil }

// A probe is good only for a 2xx answer in time; a 429/503 reports its Retry-After.
func TestProbeReportsStatusAndRetryAfter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/busy":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/maintenance":
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: &http.Client{Timeout: 5 * time.Second}}
	ctx := context.Background()
	for path, want := range map[string]pipeline.ProbeResult{
		"/health":      {OK: true, StatusCode: 200},
		"/down":        {StatusCode: 503},
		"/busy":        {StatusCode: 429, RetryAfter: 30 * time.Second},
		"/maintenance": {StatusCode: 503, RetryAfter: DefaultRetryAfterMax},
	} {
		if got := c.Probe(ctx, srv.URL+path); got != want {
			t.Errorf("%s: %+v, want %+v", path, got, want)
		}
	}
	if got := c.Probe(ctx, "http://127.0.0.1:1/health"); got != (pipeline.ProbeResult{}) {
		t.Errorf("an unreachable probe: %+v", got)
	}
}
