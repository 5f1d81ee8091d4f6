package taskecho_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
)

func TestPullOrderAndEveryFilter(t *testing.T) {
	e := env(t)
	key := e.AdminKey
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("client-only", "pending")), http.StatusOK)
	createServerTask(t, e, "p", "", "low", map[string]any{"priority": "low", "tags": []string{"red"}})
	createServerTask(t, e, "p", "q", "high", map[string]any{"priority": "HIGH", "tags": []string{"blue"}})
	createServerTask(t, e, "p", "", "ten", map[string]any{"priority": 10, "status": "error"})
	createServerTask(t, e, "p", "", "plain", nil)
	mid := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	createServerTask(t, e, "p", "", "late", map[string]any{"status": "done"})
	createServerTask(t, e, "p", "", "expired", map[string]any{"expires_at": "2000-01-01T00:00:00Z"})

	// peek pulls with a filter, then releases what it got so the next filter sees everything.
	peek := func(query string) []string {
		t.Helper()
		r := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?"+query, key, nil, http.StatusOK)
		ids := pulledIDs(r)
		if len(ids) > 0 {
			call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/pull/release/batch", key,
				map[string]any{"taskIds": ids, "lease_id": r.Data["lease_id"]}, http.StatusOK)
		}
		return ids
	}
	if got := peek(""); !slices.Equal(got, []string{"ten", "low", "plain", "late"}) {
		t.Fatalf("order %v: project level only, priority desc, then oldest; client and expired tasks never", got)
	}
	since := url.QueryEscape(mid.Format(time.RFC3339Nano))
	cases := map[string][]string{
		"status=error":             {"ten"},
		"status=done,error":        {"ten", "late"},
		"tags=red":                 {"low"},
		"priority=low":             {"low"},
		"priority=high":            nil, // the one high task is the queue's
		"priority=10":              {"ten"},
		"limit=2":                  {"ten", "low"},
		"queue_id=q":               {"high"},
		"queue_id=q&priority=high": {"high"},
		"project_only=true":        {"ten", "low", "plain", "late"},
		"created_after=" + since:   {"late"},
		"created_before=" + since:  {"ten", "low", "plain"},
		"since=" + since:           {"late"},
		"modified_after=" + since:  {"late"},
		"modified_before=" + since: {"ten", "low", "plain"},
		"since=" + strconv.FormatInt(mid.UnixMilli(), 10): {"late"},
	}
	for q, want := range cases {
		if got := peek(q); !slices.Equal(got, want) {
			t.Errorf("pull?%s = %v, want %v", q, got, want)
		}
	}
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?status=bogus", key, nil, http.StatusBadRequest), "VALIDATION_ERROR")
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?since=yesterday", key, nil, http.StatusBadRequest), "VALIDATION_ERROR")
	// The queue route pulls that queue only; the batch route restricts to ids and reports the rest.
	if got := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", key, nil, http.StatusOK)); !slices.Equal(got, []string{"high"}) {
		t.Fatalf("queue pull %v", got)
	}
	b := call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/pull/batch", key, map[string]any{"taskIds": []string{"low", "high", "nope"}}, http.StatusOK)
	if got := pulledIDs(b); !slices.Equal(got, []string{"low"}) || b.Data["failed_count"] != 2.0 {
		t.Fatalf("batch %v %+v", got, b.Data["failed"])
	}
}

func TestPullLimitBoundedByBatchSize(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.PullBatchSize = 2 })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	for _, id := range []string{"a", "b", "c"} {
		createServerTask(t, e, "p", "", id, nil)
	}
	if got := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?limit=50", e.AdminKey, nil, http.StatusOK)); len(got) != 2 {
		t.Fatalf("limit above pull_batch_size pulled %v, want 2", got)
	}
}

func TestRateLimitAnswers429WithHeaders(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.PullRateLimitPerMinute, c.PullQuota = 2, 3 })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	for _, id := range []string{"a", "b", "c", "d"} {
		createServerTask(t, e, "p", "", id, nil)
	}
	r := e.Do(http.MethodGet, "/api/v1/projects/p/tasks/pull?limit=2", e.AdminKey, nil)
	if r.Status != http.StatusOK || r.Header.Get("X-RateLimit-Limit") != "2" || r.Header.Get("X-RateLimit-Remaining") != "1" ||
		r.Header.Get("X-RateLimit-Reset") == "" || r.Header.Get("X-Quota-Limit") != "3" || r.Header.Get("X-Quota-Remaining") != "1" {
		t.Fatalf("first pull %d headers %v", r.Status, r.Header)
	}
	// The quota caps the second pull at one task.
	second := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?limit=2", e.AdminKey, nil, http.StatusOK)
	if len(pulledIDs(second)) != 1 {
		t.Fatalf("quota left 1, pulled %v", pulledIDs(second))
	}
	third := e.Do(http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil)
	var body envelope
	third.JSON(t, &body)
	if third.Status != http.StatusTooManyRequests || body.Error == nil || body.Error.Code != "RATE_LIMIT_EXCEEDED" ||
		third.Header.Get("Retry-After") == "" || third.Header.Get("X-RateLimit-Remaining") != "0" || third.Header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("third pull %d %s headers %v", third.Status, third.Body, third.Header)
	}
	// Another key has its own budget, but the quota is exhausted for this one even later.
	other := e.NewKey("read", "")
	call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", other, nil, http.StatusOK)
}

func TestMinimumPullInterval(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.PullMinInterval = time.Hour })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)
	r := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusTooManyRequests)
	if r.Error.Details["reason"] != "min_interval" {
		t.Fatalf("429 details %+v", r.Error.Details)
	}
}

// A project pull hands out the project's own server tasks only, and the queue pull the queue's,
// whether the queue task was created before or after the project-level one (and although it
// has the higher priority).
func TestProjectPullLeavesQueueTasksToTheQueue(t *testing.T) {
	e := env(t)
	for _, queueFirst := range []bool{true, false} {
		p := fmt.Sprintf("queue-first-%v", queueFirst)
		call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody(p, "q", ctask("c", "done")), http.StatusOK)
		create := []func(){
			func() { createServerTask(t, e, p, "q", "in-queue", map[string]any{"priority": "high"}) },
			func() { createServerTask(t, e, p, "", "own", nil) },
		}
		if !queueFirst {
			slices.Reverse(create)
		}
		for _, c := range create {
			c()
			time.Sleep(5 * time.Millisecond) // distinct created_at
		}
		want := []string{"own"}
		for _, path := range []string{"/tasks/pull", "/tasks/pull?limit=100", "/tasks/pull?project_only=true"} {
			got := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/"+p+path, e.AdminKey, nil, http.StatusOK))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: GET %s pulled %v, want %v; a project pull never takes the queue's task", p, path, got, want)
			}
			want = nil // the project-level task is leased now
		}
		b := call(t, e, http.MethodPost, "/api/v1/projects/"+p+"/tasks/pull/batch", e.AdminKey, map[string]any{"taskIds": []string{"in-queue"}}, http.StatusOK)
		if got := pulledIDs(b); len(got) != 0 {
			t.Fatalf("%s: batch pull by id took the queue's task: %v", p, got)
		}
		if got := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/"+p+"/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)); !slices.Equal(got, []string{"in-queue"}) {
			t.Fatalf("%s: queue pull %v, want the queue's task", p, got)
		}
	}
}
