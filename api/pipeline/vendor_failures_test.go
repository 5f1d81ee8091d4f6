package pipeline_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Vendor failures handled as the vendor means them (docs/pipelines.md "Vendor failures"), end to end against
// a vendor stub written from HTTP's rules: 429/503 with Retry-After (RFC 9110 §10.2.3), 502 from a
// gateway, 200 with a job status.

// reply is one HTTP answer of the stub.
type reply struct {
	status     int
	retryAfter string // Retry-After header, if any
	body       string // JSON
}

func ok(body string) reply { return reply{status: http.StatusOK, body: body} }

// vendorStub is a vendor API whose every route answers from a script: script(n, since) is the
// answer to the route's n-th call (from 0), since the route's first call. Every call is counted
// and timestamped per route ("POST /submit", "GET /status/job-1", ...).
type vendorStub struct {
	srv     *httptest.Server
	mu      sync.Mutex
	scripts map[string]func(n int, since time.Duration) reply
	calls   map[string][]time.Time
}

func newVendorStub(t *testing.T, scripts map[string]func(n int, since time.Duration) reply) *vendorStub {
	s := &vendorStub{scripts: scripts, calls: map[string][]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *vendorStub) serve(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	s.mu.Lock()
	script, found := s.scripts[route]
	n := len(s.calls[route])
	s.calls[route] = append(s.calls[route], time.Now())
	since := time.Since(s.calls[route][0])
	s.mu.Unlock()
	if !found {
		http.Error(w, `{"error":"no such route"}`, http.StatusNotFound)
		return
	}
	rep := script(n, since)
	if rep.retryAfter != "" {
		w.Header().Set("Retry-After", rep.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = w.Write([]byte(rep.body))
}

// times are the calls of a route so far.
func (s *vendorStub) times(route string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.calls[route]...)
}

// sequence answers the n-th call with replies[n], the last one from then on.
func sequence(replies ...reply) func(int, time.Duration) reply {
	return func(n int, _ time.Duration) reply { return replies[min(n, len(replies)-1)] }
}

// stubProviders registers two providers served by the stub, under base paths /primary and
// /backup, and returns their refs.
func (h *pipelineEnv) stubProviders(s *vendorStub) (primary, backup string) {
	h.t.Helper()
	primary, backup = testenv.Unique("stub_primary_"), testenv.Unique("stub_backup_")
	h.do("PUT", "/api/v1/providers/"+primary, map[string]any{"base_url": s.srv.URL + "/primary"}, 200)
	h.do("PUT", "/api/v1/providers/"+backup, map[string]any{"base_url": s.srv.URL + "/backup"}, 200)
	return primary, backup
}

// publishStep publishes a one-step pipeline over the two providers and returns its name.
func (h *pipelineEnv) publishStep(step map[string]any, primary, backup string) string {
	h.t.Helper()
	name := testenv.Unique("vendor_failures_")
	step["name"], step["provider_ref"], step["provider_candidates"] = "vendor_step", primary, []any{primary, backup}
	step["input_mapping"] = map[string]any{"image_url": "${input_data.input_image}"}
	h.do("POST", "/api/v1/pipelines", map[string]any{"name": name, "version": "1.0.0",
		"schema": map[string]any{"steps": []any{step}}}, 201)
	return name
}

func asyncStubStep(timeoutSeconds, maxPolls int) map[string]any {
	return map[string]any{"type": "async_api", "endpoint": "/submit",
		"output_mapping": map[string]any{"vendor_task_id": "$.task_id", "status": "$.status", "result_url": "$.result_url"},
		"polling": map[string]any{"status_endpoint": "/status/{vendor_task_id}", "interval_seconds": 1, "max_attempts": maxPolls,
			"complete_statuses": []any{"success"}, "failed_statuses": []any{"failed"}},
		"timeout_seconds": timeoutSeconds}
}

func syncStubStep(attempts int) map[string]any {
	return map[string]any{"type": "sync_api", "endpoint": "/process",
		"output_mapping": map[string]any{"result_url": "$.result_url"}, "timeout_seconds": 10,
		"retry": map[string]any{"max_attempts": attempts, "delay_seconds": 0}}
}

const (
	submitted = `{"task_id":"job-1","status":"queued"}`
	done      = `{"task_id":"job-1","status":"success","result_url":"https://cdn.example/job-1.png"}`
)

func TestVendorFailures(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})

	// Status answers queued → 503 → running → 429 (Retry-After 3) → 502 → success: one job,
	// polled through every failure, the poll after the 429 at least 3 s later.
	t.Run("polls keep the job through transient answers", func(t *testing.T) {
		t.Parallel()
		stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
			"POST /primary/submit": sequence(ok(submitted)),
			"GET /primary/status/job-1": sequence(ok(`{"status":"queued"}`), reply{status: 503, body: `{"error":"busy"}`},
				ok(`{"status":"running"}`), reply{status: 429, retryAfter: "3"}, reply{status: 502, body: `{"error":"bad gateway"}`}, ok(done)),
		})
		primary, backup := h.stubProviders(stub)
		name := h.publishStep(asyncStubStep(120, 30), primary, backup)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, 2*time.Minute)
		st := stepsOf(task)[0]
		if task["status"] != pipeline.StatusSuccess || st["provider_ref"] != primary || st["vendor_task_id"] != "job-1" {
			t.Fatalf("task %v step %v", task["status"], st)
		}
		if n := len(stub.times("POST /primary/submit")); n != 1 {
			t.Fatalf("submitted %d jobs", n)
		}
		polls := stub.times("GET /primary/status/job-1")
		if len(polls) != 6 || len(stub.times("POST /backup/submit")) != 0 {
			t.Fatalf("%d polls, backup submits %d", len(polls), len(stub.times("POST /backup/submit")))
		}
		if wait := polls[4].Sub(polls[3]); wait < 3*time.Second {
			t.Fatalf("polled %s after Retry-After: 3", wait)
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		h.record(id, "async_poll_keeps_job")
	})

	// The status endpoint is down (503 and 502, alternating) for 10 s: the
	// same job is polled until it answers, and the step succeeds with one submit in all.
	t.Run("a status outage of 10 s keeps the job", func(t *testing.T) {
		t.Parallel()
		stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
			"POST /primary/submit": sequence(ok(submitted)),
			"GET /primary/status/job-1": func(n int, since time.Duration) reply {
				switch {
				case n == 0:
					return ok(`{"status":"running"}`)
				case since < 10*time.Second && n%2 == 0:
					return reply{status: 502, body: `{"error":"upstream"}`}
				case since < 10*time.Second:
					return reply{status: 503, body: `{"error":"maintenance"}`}
				}
				return ok(done)
			},
		})
		primary, backup := h.stubProviders(stub)
		name := h.publishStep(asyncStubStep(120, 30), primary, backup)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, 2*time.Minute)
		if task["status"] != pipeline.StatusSuccess || stepsOf(task)[0]["vendor_task_id"] != "job-1" {
			t.Fatalf("task %v", task)
		}
		submits := len(stub.times("POST /primary/submit")) + len(stub.times("POST /backup/submit"))
		polls := stub.times("GET /primary/status/job-1")
		if submits != 1 || polls[len(polls)-1].Sub(polls[0]) < 10*time.Second {
			t.Fatalf("%d submits; %d polls over %s", submits, len(polls), polls[len(polls)-1].Sub(polls[0]))
		}
	})

	// A sync call answered 429 with Retry-After: 3 is retried no sooner than 3 s later.
	t.Run("a sync 429 waits for its Retry-After", func(t *testing.T) {
		t.Parallel()
		stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
			"POST /primary/process": sequence(reply{status: 429, retryAfter: "3", body: `{"error":"slow down"}`},
				ok(`{"result_url":"https://cdn.example/p.png"}`)),
		})
		primary, backup := h.stubProviders(stub)
		name := h.publishStep(syncStubStep(3), primary, backup)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, time.Minute)
		calls := stub.times("POST /primary/process")
		if task["status"] != pipeline.StatusSuccess || stepsOf(task)[0]["provider_ref"] != primary || len(calls) != 2 {
			t.Fatalf("task %v, %d calls", task, len(calls))
		}
		if wait := calls[1].Sub(calls[0]); wait < 3*time.Second {
			t.Fatalf("retried %s after Retry-After: 3", wait)
		}
	})

	// A primary that always answers 429 is called retry.max_attempts times, then the backup once.
	t.Run("an always-429 primary hands over after max_attempts", func(t *testing.T) {
		t.Parallel()
		stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
			"POST /primary/process": sequence(reply{status: 429, retryAfter: "1", body: `{"error":"quota"}`}),
			"POST /backup/process":  sequence(ok(`{"result_url":"https://cdn.example/b.png"}`)),
		})
		primary, backup := h.stubProviders(stub)
		name := h.publishStep(syncStubStep(3), primary, backup)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, time.Minute)
		if task["status"] != pipeline.StatusSuccess || stepsOf(task)[0]["provider_ref"] != backup {
			t.Fatalf("task %v", task)
		}
		if p, b := len(stub.times("POST /primary/process")), len(stub.times("POST /backup/process")); p != 3 || b != 1 {
			t.Fatalf("primary called %d times, backup %d", p, b)
		}
	})

	// A job still running at the step's timeout is given up, and the step keeps its
	// vendor_task_id (API and error message) so an operator can find it at the vendor; the backup
	// is never asked for a second job.
	t.Run("a job given up at the timeout keeps its vendor_task_id", func(t *testing.T) {
		t.Parallel()
		stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
			"POST /primary/submit":      sequence(ok(submitted)),
			"GET /primary/status/job-1": sequence(ok(`{"status":"running"}`)),
		})
		primary, backup := h.stubProviders(stub)
		name := h.publishStep(asyncStubStep(4, 100), primary, backup)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
		task := h.waitTask(id, time.Minute)
		st := stepsOf(task)[0]
		if task["status"] != pipeline.StatusFailed || st["status"] != pipeline.StatusFailed || st["vendor_task_id"] != "job-1" ||
			st["provider_ref"] != primary {
			t.Fatalf("task %v step %v", task["status"], st)
		}
		mustContain(t, st["error_message"], `vendor task job-1 still "running" when the step's timeout of 4s ran out`)
		if n := len(stub.times("POST /backup/submit")); n != 0 {
			t.Fatalf("backup asked for %d jobs", n)
		}
	})
}

// The stub's scripts answer exactly what they were given (a guard against a test passing for the
// stub's sake): unknown routes 404, Retry-After only where scripted.
func TestVendorStubAnswersAsScripted(t *testing.T) {
	stub := newVendorStub(t, map[string]func(int, time.Duration) reply{
		"GET /x": sequence(reply{status: 429, retryAfter: "3"}, ok(`{}`)),
	})
	for i, want := range []string{"429 3", "200 ", "200 "} {
		resp, err := http.Get(stub.srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("Retry-After"); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
	}
	resp, err := http.Get(stub.srv.URL + "/nope")
	if err != nil || resp.StatusCode != 404 || len(stub.times("GET /x")) != 3 {
		t.Fatal(fmt.Sprint(resp, err))
	}
	_ = resp.Body.Close()
}
