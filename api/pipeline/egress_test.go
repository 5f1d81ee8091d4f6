package pipeline_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/egress"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/worker"
)

// internalTargets reach cloud metadata or the private network: refused in every mode.
var internalTargets = []string{
	"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
	"http://[::ffff:169.254.169.254]/latest/meta-data/",
	"http://10.0.0.1/",
	"http://192.168.1.1/",
	"http://[fd00::1]/",
	"http://metadata.google.internal/computeMetadata/v1/",
}

// loopbackTargets reach the API's own host: refused in prod (dev registers its fakes there).
var loopbackTargets = []string{
	"http://127.0.0.1:8080/internal/config",
	"http://[::1]:8080/internal/config",
	"http://localhost:8080/internal/config",
	"http://2130706433:8080/internal/config",
	"http://0x7f000001/",
	"http://127.1/",
	"http://0177.0.0.1/",
	"http://[::ffff:127.0.0.1]/",
	"http://0.0.0.0:8080/",
}

// registerEach registers target as each user-supplied URL in turn and wants 400 naming the field
// and nothing stored: no provider or function under the new names, the existing one unchanged.
func registerEach(t *testing.T, env *e2e.Env, targets []string) {
	t.Helper()
	want := func(r *e2e.Response, field, target string) {
		t.Helper()
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"VALIDATION_ERROR"`) ||
			!strings.Contains(string(r.Body), `"field":"`+field+`"`) {
			t.Errorf("%s=%s: %d %s, want 400 VALIDATION_ERROR naming %s", field, target, r.Status, r.Body, field)
		}
	}
	const kept = "https://vendor.example/api"
	if r := env.Do("PUT", "/api/v1/providers/kept", env.AdminKey, map[string]any{"base_url": kept}); r.Status != http.StatusOK {
		t.Fatalf("register kept: %d %s", r.Status, r.Body)
	}
	for _, target := range targets {
		want(env.Do("PUT", "/api/v1/providers/evil", env.AdminKey, map[string]any{"base_url": target}), "base_url", target)
		want(env.Do("PUT", "/api/v1/providers/evil", env.AdminKey, map[string]any{"base_url": "https://vendor.example", "health_url": target}),
			"health_url", target)
		want(env.Do("PUT", "/api/v1/providers/kept", env.AdminKey, map[string]any{"base_url": target}), "base_url", target)
		want(env.Do("PUT", "/api/v1/functions/evil", env.AdminKey, map[string]any{"invoke_url": target}), "invoke_url", target)
	}
	for _, path := range []string{"/api/v1/providers/evil", "/api/v1/functions/evil"} {
		if r := env.Do("GET", path, env.AdminKey, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s after refused registrations: %d %s", path, r.Status, r.Body)
		}
	}
	if r := env.Do("GET", "/api/v1/providers/kept", env.AdminKey, nil); !strings.Contains(string(r.Body), kept) {
		t.Errorf("a refused update changed the provider: %s", r.Body)
	}
}

// Metadata, private and unique-local addresses are refused as provider and function URLs even in
// dev, which allows its loopback fakes.
func TestRegistrationRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	registerEach(t, h.Env, internalTargets)
}

// In prod the loopback forms are refused too, in any spelling; an operator's
// PIPELINE_ALLOWED_HOSTS lets an internal vendor in, and nothing next to it.
func TestProdRegistrationRefusesLoopback(t *testing.T) {
	t.Parallel()
	allow, err := egress.ParseAllowList("10.20.0.0/16,vendor.corp.internal")
	if err != nil {
		t.Fatal(err)
	}
	env := e2e.New(t, func(c *config.Config) {
		c.Env = "prod"
		c.Pipeline.CallbackSecret = testSecret
		c.Pipeline.AllowedHosts = allow
		c.Crawl.Consumers = false
	})
	registerEach(t, env, append(loopbackTargets, internalTargets...))
	for field, body := range map[string]map[string]any{
		"base_url":   {"base_url": "http://10.20.3.4:9000/v1", "health_url": "http://vendor.corp.internal/health"},
		"invoke_url": {"invoke_url": "http://vendor.corp.internal/fn"},
	} {
		path := "/api/v1/providers/corp"
		if field == "invoke_url" {
			path = "/api/v1/functions/corp"
		}
		if r := env.Do("PUT", path, env.AdminKey, body); r.Status != http.StatusOK {
			t.Errorf("allow-listed %v: %d %s", body, r.Status, r.Body)
		}
	}
	if r := env.Do("PUT", "/api/v1/providers/corp", env.AdminKey, map[string]any{"base_url": "http://10.21.0.1/"}); r.Status != http.StatusBadRequest {
		t.Errorf("10.21.0.1 outside the allowed range: %d %s", r.Status, r.Body)
	}
}

// The worker's activities, built as in prod, never call a provider whose name resolves to the
// worker's host — a name the API had to accept, as a DNS-rebinding name would be — and fail the
// step with a config error; built as in dev, the same provider is reached (its loopback fakes).
func TestWorkerRefusesNameResolvingToLoopbackInProd(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	var hits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"status":"secret"}`))
	}))
	t.Cleanup(internal.Close)
	ctx := context.Background()
	ref := "rebinding"
	base := "http://localhost:" + internal.URL[strings.LastIndexByte(internal.URL, ':')+1:]
	if _, err := pipelinedb.New(h.Platform.Mongo).PutProvider(ctx, &pipeline.Provider{Ref: ref, BaseURL: base,
		AuthHeader: "X-Token", AuthValue: "k"}); err != nil {
		t.Fatal(err)
	}
	req := pipeline.PollRequest{TaskID: "t", ProviderRef: ref, VendorTaskID: "v",
		Step: pipeline.Step{Polling: &pipeline.Polling{StatusEndpoint: "/internal/config"}}}

	prod := *h.Config
	prod.Env = "prod"
	_, err := worker.PipelineActivities(&prod, h.Platform.Mongo, h.Platform.Log, h.Platform.Metrics).PipelinePollAsync(ctx, req)
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeConfig || !ae.NonRetryable() || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("prod poll of %s: %v, want a non-retryable loopback refusal", base, err)
	}
	if hits.Load() != 0 {
		t.Fatal("the prod worker reached the internal server")
	}
	if _, err := h.activities().PipelinePollAsync(ctx, req); err != nil || hits.Load() != 1 {
		t.Fatalf("dev poll: %v (hits %d)", err, hits.Load())
	}
}
