package vendorhttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/egress"
	"github.com/taskloom/taskloom/internal/egress/egresshttp"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
)

// countingRecorder counts the calls recorded for the health check.
type countingRecorder struct{ n atomic.Int32 }

func (r *countingRecorder) RecordCall(context.Context, pipeline.ProviderCall) error {
	r.n.Add(1)
	return nil
}

// The worker's client under the prod policy: a provider whose name resolves to this host (as a
// rebinding name would after registration), or whose allow-listed vendor redirects here, never
// reaches the internal server with the provider's credentials; the step fails at once with a
// non-retryable config error, not counted against the vendor's health; probes report it down.
func TestWorkerNeverCallsRefusedAddresses(t *testing.T) {
	var internalHits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		_, _ = w.Write([]byte(`{"admin_key":"s3cret"}`))
	}))
	defer internal.Close()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	vendor := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/internal/config", http.StatusTemporaryRedirect)
	}))
	vendor.Listener = l
	vendor.Start()
	defer vendor.Close()

	allow, err := egress.ParseAllowList("127.0.0.2/32")
	if err != nil {
		t.Fatal(err)
	}
	calls := &countingRecorder{}
	c := &Client{HTTP: egresshttp.Client(egress.New(allow, false), 5*time.Second), Calls: calls, Metrics: pipelineprom.New(prometheus.NewRegistry())}
	rebound := "http://localhost:" + internal.URL[strings.LastIndexByte(internal.URL, ':')+1:]
	for _, base := range []string{rebound, internal.URL, vendor.URL} {
		p := &pipeline.Provider{Ref: "v", BaseURL: base, AuthHeader: "X-Token", AuthValue: "k"}
		_, err := c.Post(context.Background(), p, base+"/internal/config", map[string]any{}, "t:0:v")
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeConfig || !ae.NonRetryable() {
			t.Errorf("%s: %v, want a non-retryable %s", base, err, pipeline.ErrTypeConfig)
		}
		if got := c.Probe(context.Background(), base+"/health"); got.OK {
			t.Errorf("probe of %s: %+v", base, got)
		}
	}
	if n := internalHits.Load(); n != 0 {
		t.Fatalf("the internal server got %d requests", n)
	}
	if n := calls.n.Load(); n != 0 {
		t.Fatalf("%d refused calls were recorded against the vendor's health", n)
	}
}
