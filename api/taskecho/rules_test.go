package taskecho_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
)

func TestEditAfterPullClearsThePull(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	createServerTask(t, e, "p", "", "t1", nil)
	before := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/t1", e.AdminKey, nil, http.StatusOK).Data["server_modified_at"]
	pulled := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)
	if ids := pulledIDs(pulled); !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("pulled %v", ids)
	}
	time.Sleep(5 * time.Millisecond)
	edit := call(t, e, http.MethodPut, "/api/v1/projects/p/tasks/t1", e.AdminKey, map[string]any{"prompt": "new prompt"}, http.StatusOK)
	if edit.Data["pulled_at"] != nil || edit.Data["server_modified_at"] == before {
		t.Fatalf("edit answer %+v: pulled_at must be cleared and server_modified_at bumped", edit.Data)
	}
	h := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/t1/pull/history", e.AdminKey, nil, http.StatusOK)
	entry := h.Data["pull_history"].([]any)[0].(map[string]any)
	if h.Data["current_pull"] != nil || entry["release_reason"] != "server" || entry["released_at"] == nil {
		t.Fatalf("history %+v, want the lease closed with reason server", h.Data)
	}
	again := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)
	if ids := pulledIDs(again); !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("edited task must be pullable again, got %v", ids)
	}
	if again.Data["tasks"].([]any)[0].(map[string]any)["prompt"] != "new prompt" {
		t.Fatalf("re-pull must carry the edit: %+v", again.Data)
	}
}

func TestQueueOperationsAndTheirPullEffects(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c1", "done"), ctask("c2", "error")), http.StatusOK)
	createServerTask(t, e, "p", "q", "s1", map[string]any{"status": "error"})
	createServerTask(t, e, "p", "q", "s2", map[string]any{"status": "done"})
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)

	// reset-error: only error tasks go pending and lose their pull.
	re := call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/reset-error", e.AdminKey, nil, http.StatusOK)
	if re.Data["reset_tasks_count"] != 2.0 || re.Data["state"] != "completed" || re.Data["op_id"] == "" {
		t.Fatalf("reset-error answer %+v", re.Data)
	}
	task := func(id string) map[string]any {
		return call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/"+id, e.AdminKey, nil, http.StatusOK).Data
	}
	if s1 := task("s1"); s1["status"] != "pending" || s1["pulled_at"] != nil {
		t.Fatalf("s1 after reset-error %+v", s1)
	}
	if s2 := task("s2"); s2["status"] != "done" || s2["pulled_at"] == nil {
		t.Fatalf("s2 (done) must keep status and pull after reset-error: %+v", s2)
	}
	q := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q", e.AdminKey, nil, http.StatusOK)
	if q.Data["last_operation"] != "reset-error" || q.Data["last_reset_at"] == nil {
		t.Fatalf("queue after reset-error %+v", q.Data)
	}
	// reset: every task pending, every pull cleared (reason queue-op).
	r := call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/reset", e.AdminKey, nil, http.StatusOK)
	if r.Data["reset_tasks_count"] != 4.0 || r.Message != "成功重置队列，共 4 个任务" {
		t.Fatalf("reset answer %+v", r)
	}
	for _, id := range []string{"c1", "c2", "s1", "s2"} {
		if d := task(id); d["status"] != "pending" || d["pulled_at"] != nil {
			t.Fatalf("%s after reset %+v", id, d)
		}
	}
	hist := task("s2")["pull_history"].([]any)
	if last := hist[len(hist)-1].(map[string]any); last["release_reason"] != "queue-op" {
		t.Fatalf("s2 history %+v, want the lease closed by queue-op", hist)
	}
	// re-run, then single-task re-run.
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)
	rr := call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/re-run", e.AdminKey, nil, http.StatusOK)
	if rr.Data["rerun_tasks_count"] != 4.0 || task("s1")["pulled_at"] != nil {
		t.Fatalf("re-run %+v", rr.Data)
	}
	if q := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q", e.AdminKey, nil, http.StatusOK); q.Data["last_operation"] != "re-run" {
		t.Fatalf("last_operation %v", q.Data["last_operation"])
	}
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull?limit=1", e.AdminKey, nil, http.StatusOK)
	call(t, e, http.MethodPut, "/api/v1/projects/p/queues/q/tasks/s1", e.AdminKey, map[string]any{"status": "error"}, http.StatusOK)
	one := call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/tasks/s1/re-run", e.AdminKey, nil, http.StatusOK)
	if one.Message != "任务重新执行成功" || task("s1")["status"] != "pending" {
		t.Fatalf("single re-run %+v", one)
	}
	audit := call(t, e, http.MethodGet, "/api/v1/audit?project_id=p&action=queue-reset", e.AdminKey, nil, http.StatusOK)
	if audit.Data["pagination"].(map[string]any)["total"] != 1.0 {
		t.Fatalf("audit %+v", audit.Data)
	}
}

func TestRerunCanKeepPullStatus(t *testing.T) {
	e := env(t, func(c *config.Echo) { c.RerunClearPullStatus = false })
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	createServerTask(t, e, "p", "q", "s", nil)
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/projects/p/queues/q/re-run", e.AdminKey, nil, http.StatusOK)
	d := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/s", e.AdminKey, nil, http.StatusOK).Data
	if d["pulled_at"] == nil || d["lease_id"] == nil {
		t.Fatalf("with rerun_clear_pull_status=false the lease must survive a re-run: %+v", d)
	}
}

func TestMoveKeepsPullState(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "target", ctask("c", "pending")), http.StatusOK)
	createServerTask(t, e, "p", "", "m", nil)
	lease := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK).Data["lease_id"]
	mv := call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/m/move", e.AdminKey, map[string]any{"queue_id": "target"}, http.StatusOK)
	if mv.Data["from"] != "project" || mv.Data["to"] != "queue:target" || mv.Data["lease_id"] != lease {
		t.Fatalf("move %+v", mv.Data)
	}
	d := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/target/tasks/m", e.AdminKey, nil, http.StatusOK).Data
	if d["lease_id"] != lease || d["pulled_at"] == nil || len(d["pull_history"].([]any)) != 1 {
		t.Fatalf("moved task %+v, want the same lease and history", d)
	}
	// The lease still fences release after the move.
	call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/m/pull/release", e.AdminKey, map[string]any{"lease_id": lease}, http.StatusOK)
	// A clash in the target is a 409 and nothing moves.
	createServerTask(t, e, "p", "", "c", nil)
	wantError(t, call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/c/move", e.AdminKey, map[string]any{"queue_id": "target"}, http.StatusConflict), "DUPLICATE_KEY")
	call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/c?queue_id=", e.AdminKey, nil, http.StatusOK)
}

func TestSoftDeleteIsGoneForPushAndAbsentFromPull(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c1", "pending"), ctask("c2", "pending")), http.StatusOK)
	createServerTask(t, e, "p", "q", "s1", nil)
	createServerTask(t, e, "p", "q", "s2", nil)
	del := call(t, e, http.MethodDelete, "/api/v1/projects/p/queues/q/tasks/s1", e.AdminKey, nil, http.StatusOK)
	if del.Data["deleted_at"] == nil {
		t.Fatalf("delete %+v", del.Data)
	}
	if ids := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)); !slices.Equal(ids, []string{"s2"}) {
		t.Fatalf("pulled %v, want only s2", ids)
	}
	gone := call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c1", "pending"), ctask("s1", "done")), http.StatusGone)
	wantError(t, gone, "GONE")
	// A deleted task is gone for clients, as in TaskEcho (the document and its history stay).
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/s1", e.AdminKey, nil, http.StatusNotFound), "RESOURCE_NOT_FOUND")
	// A submit that omits c2 removes it (not listed, not counted, GET 404) but never touches the
	// server task s2.
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c1", "pending")), http.StatusOK)
	list := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks", e.AdminKey, nil, http.StatusOK).Data["items"].([]any)
	var listed []string
	for _, it := range list {
		listed = append(listed, it.(map[string]any)["id"].(string))
	}
	if !slices.Equal(sorted(listed), []string{"c1", "s2"}) {
		t.Fatalf("after omitting c2 the queue lists %v, want c1 and s2", listed)
	}
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/c2", e.AdminKey, nil, http.StatusNotFound), "RESOURCE_NOT_FOUND")
	if n := call(t, e, http.MethodGet, "/api/v1/projects/p", e.AdminKey, nil, http.StatusOK).Data["task_count"]; n != 2.0 {
		t.Fatalf("project task_count %v, want 2 (removed tasks are not counted)", n)
	}
	// Naming c2 again revives it (TaskEcho clients resubmit whole queues).
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c1", "pending"), ctask("c2", "done")), http.StatusOK)
	if d := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/c2", e.AdminKey, nil, http.StatusOK).Data; d["deleted_at"] != nil || d["status"] != "done" {
		t.Fatalf("revived c2 %+v", d)
	}
}

func TestPushAfterPullClosesLeaseAndConflictRule(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "pending")), http.StatusOK)
	createServerTask(t, e, "p", "q", "s", nil)
	createServerTask(t, e, "p", "q", "edited", nil)
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)
	// The server edits "edited" after the pull; a rejecting push is a 409 and writes nothing.
	call(t, e, http.MethodPut, "/api/v1/projects/p/queues/q/tasks/edited", e.AdminKey, map[string]any{"name": "renamed"}, http.StatusOK)
	rej := call(t, e, http.MethodPost, "/api/v1/submit?conflict=reject", e.AdminKey,
		submitBody("p", "q", ctask("c", "pending"), ctask("s", "done"), ctask("edited", "done")), http.StatusConflict)
	wantError(t, rej, "CONFLICT")
	if ids := rej.Error.Details["task_ids"].([]any); len(ids) != 1 || ids[0] != "edited" {
		t.Fatalf("conflict details %+v", rej.Error.Details)
	}
	if d := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/s", e.AdminKey, nil, http.StatusOK).Data; d["source"] != "server" {
		t.Fatalf("a rejected push must not write: %+v", d)
	}
	// The project setting does the same; the default (overwrite) accepts.
	call(t, e, http.MethodPut, "/api/v1/projects/p", e.AdminKey, map[string]any{"conflict_policy": "reject"}, http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "pending"), ctask("edited", "done")), http.StatusConflict)
	call(t, e, http.MethodPut, "/api/v1/projects/p", e.AdminKey, map[string]any{"conflict_policy": "overwrite"}, http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "pending"), ctask("s", "done"), ctask("edited", "done")), http.StatusOK)
	d := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/s", e.AdminKey, nil, http.StatusOK).Data
	entry := d["pull_history"].([]any)[0].(map[string]any)
	if d["source"] != "client" || d["lease_id"] != nil || d["pulled_at"] == nil || entry["pushed_at"] == nil || entry["release_reason"] != "client" {
		t.Fatalf("pushed task %+v: want client source, lease closed as success, pull kept", d)
	}
	st := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull/stats", e.AdminKey, nil, http.StatusOK).Data
	// pull_success_rate is TaskEcho's pulled/total over server tasks (s is a client task now);
	// lease_success_rate is the share of ended leases that ended by push or confirm.
	if st["successful_pulls"] != 1.0 || st["lease_success_rate"] != 100.0 || st["average_pull_duration"] == nil {
		t.Fatalf("pull stats %+v", st)
	}
	if ids := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/pull", e.AdminKey, nil, http.StatusOK)); len(ids) != 0 {
		t.Fatalf("pushed tasks are client tasks and never pulled again, got %v", ids)
	}
}

// A lease ended otherwise than by its expiry (here released, then the task pulled again) is
// stale: a call naming it is 409 CONFLICT; the current lease still settles.
func TestStaleLeaseIsConflict(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", "q", ctask("c", "done")), http.StatusOK)
	createServerTask(t, e, "p", "", "t", nil)
	first := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK).Data["lease_id"]
	call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/t/pull/release", e.AdminKey, map[string]any{"lease_id": first}, http.StatusOK)
	second := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull", e.AdminKey, nil, http.StatusOK)
	if ids := pulledIDs(second); !slices.Equal(ids, []string{"t"}) {
		t.Fatalf("a released task must be pullable again: %v", ids)
	}
	wantError(t, call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/t/pull/release", e.AdminKey, map[string]any{"lease_id": first}, http.StatusConflict), "CONFLICT")
	wantError(t, call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/t/pull/confirm", e.AdminKey, map[string]any{"lease_id": first}, http.StatusConflict), "CONFLICT")
	b := call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/pull/confirm/batch", e.AdminKey, map[string]any{"lease_id": second.Data["lease_id"]}, http.StatusOK)
	if b.Data["confirmed_count"] != 1.0 {
		t.Fatalf("confirm batch %+v", b.Data)
	}
	h := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/t/pull/history", e.AdminKey, nil, http.StatusOK).Data["pull_history"].([]any)
	if h[0].(map[string]any)["release_reason"] != "client" || h[1].(map[string]any)["pushed_at"] == nil {
		t.Fatalf("history %+v", h)
	}
}

func TestPermissionsAndProjectBinding(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("A", "q", ctask("a", "pending")), http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("B", "q", ctask("b", "pending")), http.StatusOK)
	createServerTask(t, e, "A", "", "sa", nil)
	read, write := e.NewKey(auth.PermRead, ""), e.NewKey(auth.PermWrite, "")
	boundA := e.NewKey(auth.PermWrite, "A")

	wantError(t, call(t, e, http.MethodPost, "/api/v1/submit", read, submitBody("A", "q", ctask("a", "done")), http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodPatch, "/api/v1/tasks/status", read, map[string]any{"project_id": "A", "queue_id": "q", "task_id": "a", "status": "done"}, http.StatusForbidden), "FORBIDDEN")
	if ids := pulledIDs(call(t, e, http.MethodGet, "/api/v1/projects/A/tasks/pull", read, nil, http.StatusOK)); len(ids) != 1 {
		t.Fatalf("a read key may pull: %v", ids)
	}
	call(t, e, http.MethodPost, "/api/v1/submit", write, submitBody("A", "q", ctask("a", "done")), http.StatusOK)
	wantError(t, call(t, e, http.MethodPost, "/api/v1/projects/A/tasks", write, map[string]any{"taskId": "x", "name": "x", "prompt": "x"}, http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodPost, "/api/v1/projects/A/queues/q/reset", write, nil, http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodGet, "/api/v1/api-keys", write, nil, http.StatusForbidden), "FORBIDDEN")

	call(t, e, http.MethodGet, "/api/v1/projects/A", boundA, nil, http.StatusOK)
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/B", boundA, nil, http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/B/queues/q/tasks", boundA, nil, http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/B/tasks/pull", boundA, nil, http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodPost, "/api/v1/submit", boundA, submitBody("B", "q", ctask("b", "done")), http.StatusForbidden), "FORBIDDEN")
	wantError(t, call(t, e, http.MethodPost, "/api/v1/tasks/log", boundA, map[string]any{"project_id": "B", "queue_id": "q", "task_id": "b", "content": "x"}, http.StatusForbidden), "FORBIDDEN")
	list := call(t, e, http.MethodGet, "/api/v1/projects", boundA, nil, http.StatusOK).Data["items"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["project_id"] != "A" {
		t.Fatalf("a bound key lists only its project: %+v", list)
	}
}

func TestAPIKeyManagementUsesTheSharedStore(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("A", "q", ctask("a", "pending")), http.StatusOK)
	created := call(t, e, http.MethodPost, "/api/v1/api-keys", e.AdminKey, map[string]any{"name": "ci", "project_id": "A", "permission": "read"}, http.StatusCreated)
	plain, id := created.Data["key"].(string), created.Data["id"].(string)
	if len(plain) != 46 || created.Data["key_masked"] == plain || created.Data["is_active"] != true {
		t.Fatalf("created key %+v", created.Data)
	}
	call(t, e, http.MethodGet, "/api/v1/projects/A/tasks/pull", plain, nil, http.StatusOK)
	wantError(t, call(t, e, http.MethodPost, "/api/v1/api-keys", e.AdminKey, map[string]any{"name": "x", "project_id": "nope"}, http.StatusBadRequest), "VALIDATION_ERROR")
	got := call(t, e, http.MethodGet, "/api/v1/api-keys/"+id+"?show_key=true", e.AdminKey, nil, http.StatusOK)
	if got.Data["key"] == plain {
		t.Fatal("keys are stored hashed: show_key must never reveal the plaintext")
	}
	wantError(t, call(t, e, http.MethodPut, "/api/v1/api-keys/"+id, e.AdminKey, map[string]any{}, http.StatusBadRequest), "VALIDATION_ERROR")
	call(t, e, http.MethodPut, "/api/v1/api-keys/"+id, e.AdminKey, map[string]any{"is_active": false}, http.StatusOK)
	wantError(t, call(t, e, http.MethodGet, "/api/v1/projects/A", plain, nil, http.StatusUnauthorized), "INVALID_API_KEY")
	call(t, e, http.MethodDelete, "/api/v1/api-keys/"+id, e.AdminKey, nil, http.StatusOK)
	wantError(t, call(t, e, http.MethodGet, "/api/v1/api-keys/"+id, e.AdminKey, nil, http.StatusNotFound), "RESOURCE_NOT_FOUND")
}

func TestExecutionStatistics(t *testing.T) {
	e := env(t)
	key := e.AdminKey
	body := submitBody("p", "q", ctask("a", "pending"), ctask("b", "pending"), ctask("c", "pending"))
	call(t, e, http.MethodPost, "/api/v1/submit", key, body, http.StatusOK)
	// a: pending → done through a push; b: pending → error through PATCH; c stays pending.
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("a", "done"), ctask("b", "pending"), ctask("c", "pending")), http.StatusOK)
	call(t, e, http.MethodPatch, "/api/v1/tasks/status", key, map[string]any{"project_id": "p", "queue_id": "q", "task_id": "b", "status": "error"}, http.StatusOK)
	// done → done again is not an execution.
	call(t, e, http.MethodPatch, "/api/v1/tasks/status", key, map[string]any{"project_id": "p", "queue_id": "q", "task_id": "a", "status": "done"}, http.StatusOK)

	sys := call(t, e, http.MethodGet, "/api/v1/stats/system", key, nil, http.StatusOK).Data
	sum := sys["summary"].(map[string]any)
	if sum["total_execution"] != 2.0 || sum["total_success"] != 1.0 || sum["total_failure"] != 1.0 || sum["success_rate"] != 0.5 {
		t.Fatalf("summary %+v", sum)
	}
	if days := sys["daily_stats"].([]any); len(days) != 30 || days[29].(map[string]any)["execution"].(map[string]any)["total"] != 2.0 {
		t.Fatalf("daily stats %d days, last %+v", len(days), days[len(days)-1])
	}
	if p := call(t, e, http.MethodGet, "/api/v1/stats/project/p", key, nil, http.StatusOK).Data; p["project_name"] != "proj p" {
		t.Fatalf("project stats %+v", p)
	}
	hours := call(t, e, http.MethodGet, "/api/v1/stats/by-hour", key, nil, http.StatusOK).Data["hourly_stats"].([]any)
	if len(hours) != 24 {
		t.Fatalf("hourly %d", len(hours))
	}
	qs := call(t, e, http.MethodGet, "/api/v1/stats/by-queue", key, nil, http.StatusOK).Data["queues"].([]any)
	cl := call(t, e, http.MethodGet, "/api/v1/stats/by-client", key, nil, http.StatusOK).Data["clients"].([]any)
	if len(qs) != 1 || qs[0].(map[string]any)["queue_id"] != "q" || len(cl) != 1 || cl[0].(map[string]any)["hostname"] != "h" {
		t.Fatalf("by queue %+v, by client %+v", qs, cl)
	}
	et := call(t, e, http.MethodGet, "/api/v1/stats/error-types", key, nil, http.StatusOK).Data["error_types"].([]any)
	if len(et) != 1 || et[0].(map[string]any)["percentage"] != 100.0 || et[0].(map[string]any)["label"] != "其他" {
		t.Fatalf("error types %+v", et)
	}
	d := call(t, e, http.MethodGet, "/api/v1/stats/execution-duration", key, nil, http.StatusOK).Data
	if d["summary"].(map[string]any)["total_count"] != 2.0 || len(d["distribution"].([]any)) != 4 {
		t.Fatalf("durations %+v", d)
	}
	wantError(t, call(t, e, http.MethodGet, "/api/v1/stats/system?startDate=never", key, nil, http.StatusBadRequest), "VALIDATION_ERROR")
}
