package vendorhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The client classifies vendor answers: 5xx/429 retryable, other 4xx rejected (non-retryable), non-JSON
// retryable, 2xx JSON decoded; the auth header and Idempotency-Key are sent.
func TestDoClassifiesVendorAnswers(t *testing.T) {
	var gotAuth, gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotKey = r.Header.Get("X-Token"), r.Header.Get("Idempotency-Key")
		switch r.URL.Path {
		case "/503":
			w.WriteHeader(503)
		case "/429":
			w.WriteHeader(429)
		case "/400":
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"bad image"}`))
		case "/html":
			_, _ = w.Write([]byte("<html>"))
		default:
			_, _ = w.Write([]byte(`{"data":{"output_url":"u"}}`))
		}
	}))
	defer srv.Close()
	store := pipelinedb.New(testenv.Mongo(t))
	c := &Client{HTTP: &http.Client{Timeout: 5 * time.Second}, Calls: store, Metrics: pipelineprom.New(prometheus.NewRegistry())}
	p := &pipeline.Provider{Ref: "v", BaseURL: srv.URL, AuthHeader: "X-Token", AuthValue: "k"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	doc, err := c.Post(ctx, p, srv.URL+"/ok", map[string]any{"a": 1}, "t:0:v")
	if err != nil || doc.(map[string]any)["data"] == nil || gotAuth != "k" || gotKey != "t:0:v" {
		t.Fatalf("ok: %v %v auth=%q key=%q", doc, err, gotAuth, gotKey)
	}
	for path, wantRetryable := range map[string]bool{"/503": true, "/429": true, "/400": false, "/html": true} {
		_, err := c.Get(ctx, p, srv.URL+path)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.NonRetryable() == wantRetryable {
			t.Errorf("%s: %v (retryable want %v)", path, err, wantRetryable)
		}
		if path == "/400" && ae.Type() != pipeline.ErrTypeVendorRejected {
			t.Errorf("400 type %s", ae.Type())
		}
	}
	st, err := store.RecentCalls(ctx, "v", time.Now().Add(-time.Minute), 100)
	if err != nil || st.Calls != 5 || st.Failures != 4 {
		t.Fatalf("recorded calls %+v %v", st, err)
	}
}

// A probe is good only for a 2xx answer in time.
func TestProbeWantsA2xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: &http.Client{Timeout: 5 * time.Second}}
	ctx := context.Background()
	if !c.Probe(ctx, srv.URL+"/health") {
		t.Error("a 200 probe failed")
	}
	if c.Probe(ctx, srv.URL+"/down") {
		t.Error("a 503 probe passed")
	}
	if c.Probe(ctx, "http://127.0.0.1:1/health") {
		t.Error("an unreachable probe passed")
	}
}
