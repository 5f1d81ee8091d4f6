package pipeline_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/uisession"
)

// stubVendor is a vendor for one test: POST /image/process answers like the example pipeline's
// image vendor, or 503 while failing; it counts the calls and the failed ones.
type stubVendor struct {
	srv           *httptest.Server
	failing       atomic.Bool
	calls, failed atomic.Int32
}

func startStubVendor(t *testing.T) *stubVendor {
	t.Helper()
	v := &stubVendor{}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		v.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if v.failing.Load() {
			v.failed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"overloaded (stub)"}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"output_url":"https://cos.example/out.jpg"},"metadata":{"duration":1}}`))
	}))
	t.Cleanup(v.srv.Close)
	return v
}

// breakerSettings sets the PIPELINE_BREAKER_* settings of the env.
func breakerSettings(threshold int, cooldown, cooldownMax time.Duration) func(*config.Config) {
	return func(c *config.Config) {
		c.Pipeline.BreakerThreshold, c.Pipeline.BreakerCooldown, c.Pipeline.BreakerCooldownMax = threshold, cooldown, cooldownMax
	}
}

// publishRoute publishes the example image pipeline under a new name with the given candidates,
// one attempt per call unless attempts says otherwise, and the step's timeout.
func (h *pipelineEnv) publishRoute(candidates []string, attempts, timeoutSeconds int) string {
	h.t.Helper()
	return h.publish("basic_clean_pipeline.json", func(d map[string]any) {
		d["name"] = testenv.Unique("breaker_")
		schema := d["schema"].(map[string]any)
		schema["max_execution_time"] = 0
		step := schema["steps"].([]any)[0].(map[string]any)
		cands := make([]any, len(candidates))
		for i, c := range candidates {
			cands[i] = c
		}
		step["provider_ref"], step["provider_candidates"] = candidates[0], cands
		step["retry"] = map[string]any{"max_attempts": attempts, "delay_seconds": 0}
		step["timeout_seconds"] = timeoutSeconds
	})
}

func circuitOf(h *pipelineEnv, ref string) map[string]any {
	return h.do("GET", "/api/v1/providers/"+ref+"/health", nil, 200)["circuit"].(map[string]any)
}

func (h *pipelineEnv) circuitGauge(ref string) float64 {
	var m dto.Metric
	if err := h.metrics().Circuits.WithLabelValues(ref).Write(&m); err != nil {
		h.t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// A primary failing every call opens its breaker after the threshold; while open the next tasks
// do not call it at all (the backup serves); after the cooldown one half-open probe reaches it,
// succeeds and closes the breaker. The API, the metric and the console show each state.
func TestBreakerOpensSkipsAndCloses(t *testing.T) {
	t.Parallel()
	const cooldown = 15 * time.Second
	h := newEnv(t, vendors.Options{}, breakerSettings(3, cooldown, time.Minute))
	primary, backup := startStubVendor(t), startStubVendor(t)
	pRef, bRef := testenv.Unique("primary_"), testenv.Unique("backup_")
	h.do("PUT", "/api/v1/providers/"+pRef, map[string]any{"base_url": primary.srv.URL}, 200)
	h.do("PUT", "/api/v1/providers/"+bRef, map[string]any{"base_url": backup.srv.URL}, 200)
	name := h.publishRoute([]string{pRef, bRef}, 1, 30)
	primary.failing.Store(true)

	run := func() map[string]any {
		t.Helper()
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, time.Minute)
		if task["status"] != "success" {
			t.Fatalf("task %v", task)
		}
		return stepsOf(task)[0]
	}
	for i := range 3 {
		if st := run(); st["provider_ref"] != bRef {
			t.Fatalf("task %d served by %v", i+1, st["provider_ref"])
		}
		if got := circuitOf(h, pRef); i < 2 && (got["state"] != "closed" || got["consecutive_failures"] != float64(i+1)) {
			t.Fatalf("after %d failures: %v", i+1, got)
		}
	}
	c := circuitOf(h, pRef)
	if c["state"] != "open" || c["consecutive_failures"] != 3.0 || c["cooldown_until"] == nil || !strings.Contains(c["reason"].(string), "503") {
		t.Fatalf("after the threshold: %v", c)
	}
	// While open: tasks skip the primary without calling it.
	before := primary.calls.Load()
	for range 2 {
		if st := run(); st["provider_ref"] != bRef {
			t.Fatalf("served by %v while the primary's breaker is open", st["provider_ref"])
		}
	}
	if n := primary.calls.Load() - before; n != 0 {
		t.Fatalf("the open primary was called %d times (now %s, circuit %v)", n, time.Now().UTC().Format(time.RFC3339Nano), circuitOf(h, pRef))
	}

	if g := h.circuitGauge(pRef); g != 1 {
		t.Fatalf("taskloom_provider_circuit_state{provider=%s} = %v, want 1 (open)", pRef, g)
	}
	list := h.do("GET", "/api/v1/providers", nil, 200)["providers"].([]any)
	found := false
	for _, p := range list {
		p := p.(map[string]any)
		if p["provider_ref"] == pRef {
			found = p["health"].(map[string]any)["circuit"].(map[string]any)["state"] == "open"
		}
	}
	if !found {
		t.Fatalf("GET /api/v1/providers does not show %s's open circuit: %v", pRef, list)
	}
	if page := consolePipelinesPage(t, h); !strings.Contains(rowOf(page, pRef), `circuit-open`) {
		t.Fatalf("console provider row: %s", rowOf(page, pRef))
	}

	// The primary recovers; after the cooldown one probe reaches it and closes the breaker.
	primary.failing.Store(false)
	until, err := time.Parse(time.RFC3339, circuitOf(h, pRef)["cooldown_until"].(string))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(until) + 100*time.Millisecond)
	if st := run(); st["provider_ref"] != pRef {
		t.Fatalf("after the cooldown served by %v", st["provider_ref"])
	}
	if n := primary.calls.Load() - before; n != 1 {
		t.Fatalf("%d calls to the primary after the cooldown, want the one probe", n)
	}
	if c := circuitOf(h, pRef); c["state"] != "closed" || c["consecutive_failures"] != 0.0 || c["cooldown_until"] != nil {
		t.Fatalf("after the probe's success: %v", c)
	}
	if g := h.circuitGauge(pRef); g != 0 {
		t.Fatalf("gauge after close = %v", g)
	}
	if page := consolePipelinesPage(t, h); !strings.Contains(rowOf(page, pRef), `circuit-closed`) {
		t.Fatalf("console provider row after close: %s", rowOf(page, pRef))
	}
}

// A route with a single candidate during a 60 s outage: tasks arriving throughout wait for the
// breaker's cooldown instead of each paying failed calls, so the vendor sees at most one failed
// call per cooldown period (≤ ceil(outage/cooldown)+1); every task succeeds once it is back.
func TestBreakerSingleCandidateOutage(t *testing.T) {
	t.Parallel()
	const (
		outage   = 60 * time.Second
		cooldown = 3 * time.Second
	)
	h := newEnv(t, vendors.Options{}, breakerSettings(2, cooldown, 4*cooldown))
	v := startStubVendor(t)
	ref := testenv.Unique("only_")
	h.do("PUT", "/api/v1/providers/"+ref, map[string]any{"base_url": v.srv.URL}, 200)
	// Two attempts per call: the first task's own failures open the breaker, so it waits too.
	name := h.publishRoute([]string{ref}, 2, 150)

	v.failing.Store(true)
	start := time.Now()
	var ids []string
	for time.Since(start) < outage-3*time.Second {
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		ids = append(ids, id)
		time.Sleep(3 * time.Second)
	}
	time.Sleep(time.Until(start.Add(outage)))
	v.failing.Store(false)
	failed := v.failed.Load()

	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if task := h.waitTask(id, 2*time.Minute); task["status"] != "success" {
				t.Errorf("task %s: %v", id, task)
			}
		})
	}
	wg.Wait()
	bound := int32(math.Ceil(float64(outage)/float64(cooldown))) + 1
	t.Logf("%d tasks during a %s outage: %d failed vendor calls (bound %d), %d calls in all", len(ids), outage, failed, bound, v.calls.Load())
	if failed > bound {
		t.Fatalf("%d failed calls during the outage, more than ceil(outage/cooldown)+1 = %d", failed, bound)
	}
	if c := circuitOf(h, ref); c["state"] != "closed" {
		t.Fatalf("after recovery: %v", c)
	}
	h.record(ids[0], "breaker_single_candidate_waits")
}

// consolePipelinesPage is the console's pipelines page as a signed-in administrator sees it.
func consolePipelinesPage(t *testing.T, h *pipelineEnv) string {
	t.Helper()
	ctx := h.Context()
	usr, err := uisession.NewUsers(h.Platform.Mongo).Init(ctx, "admin", "breaker-test-pass")
	if err != nil {
		usr, err = uisession.NewUsers(h.Platform.Mongo).Authenticate(ctx, "admin", "breaker-test-pass")
	}
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := uisession.NewSessions(h.Platform.Mongo, time.Hour).Create(ctx, usr)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, h.API.URL+"/ui/console/pipelines", nil)
	req.AddCookie(&http.Cookie{Name: "taskloom_session", Value: token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("console pipelines page: %d %s", resp.StatusCode, body)
	}
	return string(body)
}

// rowOf is the provider table row of ref in the console page.
func rowOf(page, ref string) string {
	i := strings.Index(page, `data-provider="`+ref+`"`)
	if i < 0 {
		return ""
	}
	end := strings.Index(page[i:], "</tr>")
	return page[i : i+end]
}
