package taskecho_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// A lease that expired a moment ago (no sweep has run: the sweeper's interval is an hour) is over
// for every call: release (with or without its lease_id), confirm, and both batch calls answer
// 409 LEASE_EXPIRED, change nothing, and the next client pulls the tasks, whose history shows
// the lease ended by timeout.
func TestExpiredLeaseIsOverForEveryCall(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.PullTimeout, c.SweepInterval = time.Second, time.Hour })
	next := e.NewKey(auth.PermRead, "")
	cases := []struct {
		name, path string
		body       func(lease any) any
	}{
		{"release", "/tasks/t1/pull/release", func(l any) any { return map[string]any{"lease_id": l} }},
		{"release without lease_id", "/tasks/t1/pull/release", func(any) any { return nil }},
		{"confirm", "/tasks/t1/pull/confirm", func(l any) any { return map[string]any{"lease_id": l} }},
		{"release batch", "/tasks/pull/release/batch", func(l any) any { return map[string]any{"lease_id": l, "taskIds": []string{"t1", "t2"}} }},
		{"confirm batch", "/tasks/pull/confirm/batch", func(l any) any { return map[string]any{"lease_id": l, "taskIds": []string{"t1", "t2"}} }},
		{"confirm batch of the whole lease", "/tasks/pull/confirm/batch", func(l any) any { return map[string]any{"lease_id": l} }},
	}
	leases := make([]any, len(cases))
	for i := range cases {
		p := fmt.Sprintf("p%d", i)
		call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody(p, "q", ctask("c", "done")), http.StatusOK)
		createServerTask(t, e, p, "", "t1", nil)
		createServerTask(t, e, p, "", "t2", nil)
		leases[i] = call(t, e, http.MethodGet, "/api/v1/projects/"+p+"/tasks/pull", e.AdminKey, nil, http.StatusOK).Data["lease_id"]
	}
	time.Sleep(1100 * time.Millisecond)
	for i, c := range cases {
		p := fmt.Sprintf("p%d", i)
		before := pullStates(t, e, p)
		r := call(t, e, http.MethodPost, "/api/v1/projects/"+p+c.path, e.AdminKey, c.body(leases[i]), http.StatusConflict)
		wantError(t, r, "LEASE_EXPIRED")
		if after := pullStates(t, e, p); after != before {
			t.Fatalf("%s with an expired lease changed the tasks:\n%s\nwas\n%s", c.name, after, before)
		}
		again := call(t, e, http.MethodGet, "/api/v1/projects/"+p+"/tasks/pull", next, nil, http.StatusOK)
		if got := pulledIDs(again); len(got) != 2 {
			t.Fatalf("%s: the next client pulled %v, want both tasks", c.name, got)
		}
		h := call(t, e, http.MethodGet, "/api/v1/projects/"+p+"/tasks/t1/pull/history", e.AdminKey, nil, http.StatusOK).Data["pull_history"].([]any)
		if first := h[0].(map[string]any); first["release_reason"] != "timeout" || first["pushed_at"] != nil {
			t.Fatalf("%s: history %+v, want the expired lease ended by timeout", c.name, h)
		}
	}
}

// pullStates is the pull history (current lease and entries) of project's tasks t1 and t2.
func pullStates(t *testing.T, e *e2e.Env, project string) string {
	t.Helper()
	var out []any
	for _, id := range []string{"t1", "t2"} {
		out = append(out, call(t, e, http.MethodGet, "/api/v1/projects/"+project+"/tasks/"+id+"/pull/history", e.AdminKey, nil, http.StatusOK).Data)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
