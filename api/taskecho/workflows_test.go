package taskecho_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/schedule"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

// recordHistory records a finished workflow's history when RECORD_HISTORIES is set.
func recordHistory(t *testing.T, e *e2e.Env, workflowID, runID, name string) {
	t.Helper()
	histories.Record(t, e.Platform.Temporal, "taskecho", workflowID, runID, name)
}

// TestPullLeaseSweeperReleasesAndExpires runs the sweeper workflow: a lease past pull_timeout is
// released with released_by timeout, and a task past task_expiry_time is archived.
func TestPullLeaseSweeperReleasesAndExpires(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.PullTimeout, c.TaskExpiryTime = time.Second, 2*time.Second })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	createServerTask(t, e, "p", "", "leased", map[string]any{"expires_at": "2999-01-01T00:00:00Z"})
	call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)
	createServerTask(t, e, "p", "", "short-lived", nil)
	time.Sleep(2100 * time.Millisecond)

	opts := client.StartWorkflowOptions{ID: testenv.Unique("sweep-"), TaskQueue: e.Config.Temporal.TaskQueue}
	run, err := e.Platform.Temporal.ExecuteWorkflow(e.Context(), opts, taskechowf.PullLeaseSweeperWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	var res taskechoact.SweepResult
	if err := run.Get(e.Context(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Released != 1 || res.Expired != 1 || res.Overdue != 1 {
		t.Fatalf("sweep %+v, want 1 released, 1 expired", res)
	}
	h := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/leased/pull/history", e.AdminKey, nil, http.StatusOK).Data
	entry := h["pull_history"].([]any)[0].(map[string]any)
	if h["current_pull"] != nil || entry["released_by"] != "timeout" || entry["release_reason"] != "timeout" {
		t.Fatalf("history after sweep %+v", h)
	}
	d := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/short-lived", e.AdminKey, nil, http.StatusOK).Data
	if d["archived_at"] == nil {
		t.Fatalf("expired task %+v, want archived", d)
	}
	if got := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)); len(got) != 1 || got[0] != "leased" {
		t.Fatalf("after the sweep only the released task is pullable, got %v", got)
	}
	recordHistory(t, e, opts.ID, run.GetRunID(), "sweeper_release_and_expire")
}

// TestQueueOperationRunsAsWorkflow: a reset is a QueueOperationWorkflow whose id is answered
// over HTTP; with the worker stopped the call answers 202 and the job finishes once a worker
// comes back.
func TestQueueOperationRunsAsWorkflow(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.QueueOpWait = 500 * time.Millisecond })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("a", "error"), ctask("b", "done")), http.StatusOK)
	e.StopWorker()
	r := call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/reset", e.AdminKey, nil, http.StatusAccepted)
	if r.Data["state"] != "running" || r.Data["reset_tasks_count"] != 2.0 {
		t.Fatalf("reset with no worker %+v", r.Data)
	}
	opID := r.Data["op_id"].(string) // workflow id + "/" + run id; the workflow id may hold "/"
	i := strings.LastIndex(opID, "/")
	wid, rid := opID[:i], opID[i+1:]
	e.StartWorker()
	var res taskechowf.QueueOpResult
	if err := e.Platform.Temporal.GetWorkflow(e.Context(), wid, rid).Get(e.Context(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Changed != 2 {
		t.Fatalf("queue op result %+v", res)
	}
	q := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q", e.AdminKey, nil, http.StatusOK).Data
	if q["last_operation"] != "reset" || q["task_stats"].(map[string]any)["pending"] != 2.0 {
		t.Fatalf("queue after reset %+v", q)
	}
	// queue_reset.json (one activity per batch, then the finish) was recorded before
	// taskecho-queueop-one-activity and is kept for replay; this is the one-activity shape.
	recordHistory(t, e, wid, rid, "queue_reset_one_activity")
}

// `starter schedules apply` creates the sweeper schedule, or points an existing one at the
// configured task queue and interval.
func TestSweeperScheduleFollowsConfiguration(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.SweepInterval = 90 * time.Second })
	for _, every := range []time.Duration{time.Minute, 90 * time.Second} { // create, then update
		e.Config.Echo.SweepInterval = every
		if err := schedule.Apply(e.Context(), e.Platform.Temporal, taskechowf.ScheduleOptions(e.Config)[0]); err != nil {
			t.Fatal(err)
		}
	}
	desc, err := e.Platform.Temporal.ScheduleClient().GetHandle(e.Context(), taskechowf.SweeperScheduleID).Describe(e.Context())
	if err != nil {
		t.Fatal(err)
	}
	act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || act.TaskQueue != e.Config.Temporal.TaskQueue {
		t.Fatalf("schedule action %+v, want task queue %s", desc.Schedule.Action, e.Config.Temporal.TaskQueue)
	}
	if iv := desc.Schedule.Spec.Intervals; len(iv) != 1 || iv[0].Every != 90*time.Second {
		t.Fatalf("schedule intervals %+v", iv)
	}
}

// The task server's Prometheus series are exported once pulls happen.
func TestMetricsAreExported(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	createServerTask(t, e, "p", "", "t", nil)
	lease := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK).Data["lease_id"]
	call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/t/pull/confirm", e.AdminKey, map[string]any{"lease_id": lease}, http.StatusOK)
	body := string(e.Do(http.MethodGet, "/metrics", "", nil).Body)
	for _, want := range []string{`taskloom_echo_pull_requests_total{project="p",queue=""} 1`, `taskloom_echo_pulled_tasks_total{project="p"} 1`,
		`taskloom_echo_leases_closed_total{outcome="success"} 1`, "taskloom_echo_pull_to_push_seconds_count 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
