package pipeline

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

var breakerPolicy = pipeline.BreakerPolicy{Threshold: 3, Cooldown: time.Minute, CooldownMax: 10 * time.Minute, RateLimitWindow: time.Minute}

// swapCounter is the store, counting the circuit writes that won and opened a closed breaker.
type swapCounter struct {
	Store
	opens atomic.Int32
}

func (s *swapCounter) SwapCircuit(ctx context.Context, ref string, prev int64, next pipeline.Circuit) (pipeline.Circuit, bool, error) {
	c, won, err := s.Store.SwapCircuit(ctx, ref, prev, next)
	if won && next.State == pipeline.CircuitOpen && next.Opens == 1 && next.ProbeID == "" && next.ConsecutiveFailures >= breakerPolicy.Threshold {
		s.opens.Add(1)
	}
	return c, won, err
}

// workers are n activity structs over one store, each with its own caches: n worker processes.
func workers(t *testing.T, n int) ([]*Activities, *swapCounter, context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	store := pipelinedb.New(testenv.Mongo(t))
	ref := testenv.Unique("prov-")
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: ref, BaseURL: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	counter := &swapCounter{Store: store}
	out := make([]*Activities, n)
	for i := range out {
		out[i] = newActivities(store, "http://backend.example")
		out[i].Store, out[i].Breaker = counter, breakerPolicy
	}
	return out, counter, ctx, ref
}

func circuitOf(t *testing.T, ctx context.Context, a *Activities, ref string) pipeline.Circuit {
	t.Helper()
	hs, err := a.Store.GetHealth(ctx, []string{ref})
	if err != nil {
		t.Fatal(err)
	}
	return hs[ref].Circuit
}

// 24 workers call at once and fail against a closed breaker: it opens exactly once (the guarded
// write lets one of them open it), and the calls that saw it open come back as circuit-open (not
// to be retried into it).
func TestBreakerConcurrentFailuresOpenItOnce(t *testing.T) {
	ws, counter, ctx, ref := workers(t, 25)
	// The 25th worker stays out of the stampede: a worker that lost every swap may still hold a
	// cached view from before the opening, and may let one call through on it (one stale call
	// per worker per cache period, at most); a worker that reads the document sees the breaker open.
	ws, late := ws[:24], ws[24]
	var held atomic.Int32
	var wg sync.WaitGroup
	for _, a := range ws {
		wg.Go(func() {
			h, _, err := a.admit(ctx, ref)
			if err == nil {
				err = a.recordOutcome(ctx, ref, h, "", temporal.NewApplicationError(ref+" answered 503", "VendorUnavailable"))
			}
			if isCircuitOpen(err) {
				held.Add(1)
			}
		})
	}
	wg.Wait()
	c := circuitOf(t, ctx, ws[0], ref)
	if c.Current() != pipeline.CircuitOpen || c.Opens != 1 || c.ConsecutiveFailures < breakerPolicy.Threshold {
		t.Fatalf("circuit after 24 concurrent failures: %+v", c)
	}
	if n := counter.opens.Load(); n != 1 {
		t.Fatalf("%d writes opened the breaker, want 1", n)
	}
	if held.Load() == 0 {
		t.Fatal("no failing call came back as circuit-open")
	}
	// While open, a new call is refused without reaching the vendor (127.0.0.1:1 would fail anyway).
	if _, _, err := late.admit(ctx, ref); !isCircuitOpen(err) {
		t.Fatalf("admit while open: %v", err)
	}
}

// After the cooldown, 16 workers ask at once: exactly one gets the half-open probe, the others are
// held; the probe's success closes the breaker for all.
func TestBreakerOneHalfOpenProbeAcrossWorkers(t *testing.T) {
	ws, _, ctx, ref := workers(t, 16)
	open := pipeline.Circuit{State: pipeline.CircuitOpen, Opens: 1, ConsecutiveFailures: 3, CooldownUntil: time.Now().UTC().Add(-time.Second)}
	if _, won, err := ws[0].Store.SwapCircuit(ctx, ref, 0, open); err != nil || !won {
		t.Fatalf("set open: %v %v", won, err)
	}
	var mu sync.Mutex
	var probes []string
	var winner *Activities
	var view *pipeline.Health
	var held atomic.Int32
	var wg sync.WaitGroup
	for _, a := range ws {
		wg.Go(func() {
			h, id, err := a.admit(ctx, ref)
			switch {
			case err == nil && id != "":
				mu.Lock()
				probes, winner, view = append(probes, id), a, h
				mu.Unlock()
			case isCircuitOpen(err):
				held.Add(1)
			default:
				t.Errorf("admit: %q %v", id, err)
			}
		})
	}
	wg.Wait()
	if len(probes) != 1 || held.Load() != 15 {
		t.Fatalf("%d probes, %d held; want 1 and 15", len(probes), held.Load())
	}
	if c := circuitOf(t, ctx, ws[0], ref); c.Current() != pipeline.CircuitHalfOpen || c.ProbeID != probes[0] {
		t.Fatalf("after the claim: %+v", c)
	}
	if err := winner.recordOutcome(ctx, ref, view, probes[0], nil); err != nil {
		t.Fatal(err)
	}
	if c := circuitOf(t, ctx, ws[0], ref); c.Current() != pipeline.CircuitClosed || c.ConsecutiveFailures != 0 {
		t.Fatalf("after the probe's success: %+v", c)
	}
	// Another worker's cached view still says half-open: it reads again instead of refusing.
	if _, id, err := ws[3].admit(ctx, ref); err != nil || id != "" {
		t.Fatalf("admit after close on a stale cache: %q %v", id, err)
	}
}

// The happy path (a closed breaker and a successful call) issues no MongoDB command for the
// breaker: a sync call costs the same with the breaker on as with it off.
func TestBreakerHappyPathCostsNoCommand(t *testing.T) {
	a, ctx := monitoredActivities(t)
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"output_url":"https://cos.example/out.jpg"},"metadata":{"duration":1}}`))
	}))
	t.Cleanup(vendor.Close)
	store := storeOf(a)
	raw, err := os.ReadFile(testenv.RepoRoot() + "/testdata/pipelines/basic_clean_pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := pipeline.ParseDefinition(raw)
	if err != nil {
		t.Fatal(err)
	}
	st := d.Schema.Steps[0]
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: st.ProviderRef, BaseURL: vendor.URL}); err != nil {
		t.Fatal(err)
	}
	call := func(policy pipeline.BreakerPolicy) *mongox.Tally {
		t.Helper()
		a.Breaker = policy
		input := map[string]any{"input_image": "https://cos.example/a.jpg"}
		id := pipeline.NewTaskID()
		if _, err := store.InsertTask(ctx, &pipeline.Task{ID: id, UserID: "u", FeatureID: "f", Pipeline: d.Name, Version: d.Version, InputData: input,
			Plan: pipeline.PlanOf(d.Schema.Steps)}); err != nil {
			t.Fatal(err)
		}
		tctx, tally := mongox.WithTally(ctx)
		if _, err := a.PipelineCallSync(tctx, pipeline.CallRequest{TaskID: id, UserID: "u", Step: st, ProviderRef: st.ProviderRef, InputData: input}); err != nil {
			t.Fatal(err)
		}
		return tally
	}
	call(breakerPolicy) // warms the provider and health caches, as the step's provider choice does
	on, off := call(breakerPolicy), call(pipeline.BreakerPolicy{})
	if on.Total() != off.Total() {
		t.Fatalf("sync call with the breaker: %s; without: %s", on, off)
	}
}

func isCircuitOpen(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == pipeline.ErrTypeCircuitOpen
}
