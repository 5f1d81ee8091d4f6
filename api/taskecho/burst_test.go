package taskecho_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// TestAppendBurstWithSubmitInTheMiddle is the append burst's acceptance: 50 message and 20 log appends
// into one task at once, with a submit of its queue in the middle. Every append answers 200 within
// the TaskEcho client's 10 s timeout (the 2 s target is a speed, measured by the bench's append
// burst row, not asserted by a timed test on a shared machine), the ids are unique and consecutive, and the submit (which keeps the task's conversation:
// its status stays done) reverts none of them, while it does replace another task's messages.
func TestAppendBurstWithSubmitInTheMiddle(t *testing.T) {
	e := env(t)
	key := e.AdminKey
	withMsg := ctask("b", "pending")
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("a", "done"), withMsg), http.StatusOK)

	const messages, logs = 50, 20
	var mu sync.Mutex
	msgIDs, logIDs := map[int]bool{}, map[int]bool{}
	var slowest time.Duration
	var wg sync.WaitGroup
	appendOne := func(path string, body map[string]any, idKey string, ids map[int]bool) {
		defer wg.Done()
		start := time.Now()
		r := e.Do(http.MethodPost, path, key, body)
		took := time.Since(start)
		var env envelope
		r.JSON(t, &env)
		if r.Status != http.StatusOK || took > clientTimeout {
			t.Errorf("%s: %d after %s: %s", path, r.Status, took, r.Body)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		slowest = max(slowest, took)
		id := int(env.Data[idKey].(float64))
		if ids[id] {
			t.Errorf("%s %d handed out twice", idKey, id)
		}
		ids[id] = true
	}
	for i := range messages {
		wg.Add(1)
		go appendOne("/api/v1/tasks/message", map[string]any{"project_id": "p", "queue_id": "q", "task_id": "a",
			"role": "assistant", "content": fmt.Sprintf("m%02d", i)}, "message_id", msgIDs)
		if i == messages/2 {
			// The push in the middle: a keeps its status (done → done keeps the conversation);
			// b's messages are replaced by the pushed ones.
			b := ctask("b", "pending")
			b["messages"] = []any{map[string]any{"role": "user", "content": "pushed"}}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do(http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("a", "done"), b))
				if r.Status != http.StatusOK {
					t.Errorf("submit mid-burst: %d %s", r.Status, r.Body)
				}
			}()
		}
	}
	for i := range logs {
		wg.Add(1)
		go appendOne("/api/v1/tasks/log", map[string]any{"project_id": "p", "queue_id": "q", "task_id": "a",
			"content": fmt.Sprintf("l%02d", i)}, "log_id", logIDs)
	}
	wg.Wait()
	t.Logf("slowest append: %s", slowest)
	wantConsecutive(t, "message_id", msgIDs, messages)
	wantConsecutive(t, "log_id", logIDs, logs)

	a := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/a", key, nil, http.StatusOK)
	if got := contents(a.Data["messages"]); len(got) != messages || got[0] != "m00" || got[messages-1] != fmt.Sprintf("m%02d", messages-1) {
		t.Fatalf("stored messages %v, want all %d appends", got, messages)
	}
	if got := contents(a.Data["logs"]); len(got) != logs {
		t.Fatalf("stored logs %v, want all %d appends", got, logs)
	}
	b := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/q/tasks/b", key, nil, http.StatusOK)
	if got := contents(b.Data["messages"]); len(got) != 1 || got[0] != "pushed" {
		t.Fatalf("b's messages %v, want the pushed one", got)
	}
	// The next append continues the sequence the burst left.
	r := call(t, e, http.MethodPost, "/api/v1/tasks/message", key, map[string]any{"project_id": "p", "queue_id": "q",
		"task_id": "a", "role": "user", "content": "after"}, http.StatusOK)
	if r.Data["message_id"] != float64(messages) {
		t.Fatalf("message_id after the burst %v, want %d", r.Data["message_id"], messages)
	}
}

// redisCommands is the application's taskloom_redis_commands_total, all commands summed.
func redisCommands(t *testing.T, e *e2e.Env) int {
	t.Helper()
	mfs, err := e.Platform.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == platform.RedisCommandsMetric {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// clientTimeout is the TaskEcho client's (taskecho-client.js) request timeout.
const clientTimeout = 10 * time.Second

func wantConsecutive(t *testing.T, what string, ids map[int]bool, n int) {
	t.Helper()
	for i := range n {
		if !ids[i] {
			t.Fatalf("%s: %d of %d ids, missing %d", what, len(ids), n, i)
		}
	}
}

// contents returns the content of each message or log entry, sorted.
func contents(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any)["content"].(string))
	}
	sort.Strings(out)
	return out
}

// TestCommandBudgets asserts the task server's command budgets (docs/taskecho.md),
// counted with the driver's command monitor around one API request and, for Redis, with
// taskloom_redis_commands_total around it. Each row is the floor of what the request must do:
//   - submit of a queue of 20 ≤ 6 echo commands.
//   - pull of a full batch ≤ 3 MongoDB commands in all but the cached key lookup: one find of the
//     candidates (its batch size is the read window, so no getMore), one guarded bulk write that
//     leases them (the atomic lock: a task goes to the statement whose revision guard matched),
//     one audit insert. The project is looked up only when nothing was handed out.
//   - and ≤ 2 Redis commands: one script call deciding the interval, both rate windows and the
//     quota atomically, one charging the tasks handed out to the daily quota.
//   - append of a message ≤ 2 per append over a burst (the same count): the one atomic update that pushes the
//     message and hands out its message_id, plus the touch of project and queue (last_task_at)
//     by each task's first append of a second only; no append costs more than those 3.
//   - batch confirm and release of a full batch 3 each (one read of the listed tasks, one bulk
//     write, one audit insert), however many of the listed tasks the lease does not hold; a list
//     longer than a full batch is refused with no command at all.
func TestCommandBudgets(t *testing.T) {
	const batch = 50 // pull_batch_size: a full batch
	e := env(t, func(c *config.Echo) { c.PullBatchSize = batch })
	key := e.AdminKey
	var tasks []map[string]any
	for i := range 20 {
		tasks = append(tasks, ctask(fmt.Sprintf("c%02d", i), "pending"))
	}
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", tasks...), http.StatusOK)
	for i := range 2*batch + 1 {
		createServerTask(t, e, "p", "", fmt.Sprintf("s%03d", i), nil)
	}
	// One pull first, so that the limiter's scripts are loaded (a first call sends the script
	// once more after the server answered NOSCRIPT).
	call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull?limit=1", key, nil, http.StatusOK)
	counted := func(what string, status int, method, path string, body any) (map[string]any, int, int) {
		t.Helper()
		before := redisCommands(t, e)
		r, tally := e.DoCounted(method, path, key, body)
		if r.Status != status {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		n := 0
		for _, c := range tally.Commands() {
			if c.Collection != "api_keys" { // the key lookup: cached, and refreshed when the cache entry expires
				n++
			}
		}
		return r.Map(t), n, redisCommands(t, e) - before
	}
	budget := func(what string, max, status int, method, path string, body any) map[string]any {
		t.Helper()
		r, tally := e.DoCounted(method, path, key, body)
		if r.Status != status {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		n := 0
		for _, c := range tally.Commands() {
			switch c.Collection {
			case "tasks", "projects", "queues", "audit_log", "echo_executions":
				n++
			}
		}
		t.Logf("%s: %d echo commands (%s)", what, n, tally)
		if n > max {
			t.Errorf("%s: %d echo commands, budget %d (%s)", what, n, max, tally)
		}
		return r.Map(t)
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }
	budget("submit of a queue of 20", 6, http.StatusOK, http.MethodPost, "/api/v1/submit", submitBody("p", "q", tasks...))
	pulls := [2]map[string]any{}
	for i := range pulls {
		var mongoN, redisN int
		pulls[i], mongoN, redisN = counted("pull of a full batch", http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/projects/p/tasks/pull?limit=%d", batch), nil)
		t.Logf("pull of a full batch: %d MongoDB, %d Redis commands", mongoN, redisN)
		if mongoN > 3 || redisN > 2 {
			t.Errorf("pull of a full batch: %d MongoDB commands (budget 3), %d Redis (budget 2)", mongoN, redisN)
		}
	}
	const appends = 20
	total := 0
	for i := range appends {
		_, n, _ := counted("append of a message", http.StatusOK, http.MethodPost, "/api/v1/tasks/message",
			map[string]any{"project_id": "p", "queue_id": "q", "task_id": "c00", "role": "assistant", "content": fmt.Sprint(i)})
		if n > 3 {
			t.Errorf("append %d: %d MongoDB commands, at most 3", i, n)
		}
		total += n
	}
	t.Logf("%d appends: %d MongoDB commands", appends, total)
	if total > 2*appends {
		t.Errorf("%d appends: %d MongoDB commands, budget %d", appends, total, 2*appends)
	}
	lease := func(m map[string]any) string { return data(m)["lease_id"].(string) }
	pulled := func(m map[string]any) []string {
		var ids []string
		for _, x := range data(m)["tasks"].([]any) {
			ids = append(ids, x.(map[string]any)["task_id"].(string))
		}
		return ids
	}
	first, second := pulled(pulls[0]), pulled(pulls[1])
	if len(first) != batch || len(second) != batch {
		t.Fatalf("pulls got %d and %d tasks, want %d each", len(first), len(second), batch)
	}

	long := make([]string, 10_000)
	for i := range long {
		long[i] = fmt.Sprintf("s%05d", i)
	}
	for _, path := range []string{"/api/v1/projects/p/tasks/pull/confirm/batch", "/api/v1/projects/p/tasks/pull/release/batch"} {
		r := budget("a list of 10,000", 0, http.StatusBadRequest, http.MethodPost, path, map[string]any{"lease_id": lease(pulls[0]), "taskIds": long})
		if d := r["error"].(map[string]any)["details"].(map[string]any); r["error"].(map[string]any)["code"] != "VALIDATION_ERROR" ||
			d["field"] != "taskIds" || d["limit"] != float64(batch) {
			t.Fatalf("%s of 10,000 ids: %+v, want VALIDATION_ERROR naming taskIds and the limit %d", path, r["error"], batch)
		}
	}

	c := budget("batch confirm of a full batch", 3, http.StatusOK, http.MethodPost, "/api/v1/projects/p/tasks/pull/confirm/batch",
		map[string]any{"lease_id": lease(pulls[0]), "taskIds": first})
	if data(c)["confirmed_count"] != float64(batch) {
		t.Fatalf("full confirm %+v", data(c))
	}
	// Half of this list is the lease's; the other half was confirmed under the first lease.
	mixed := append(slices.Clone(second[:batch/2]), first[:batch/2]...)
	r := budget("batch release of a full batch, half not the lease's", 3, http.StatusOK, http.MethodPost,
		"/api/v1/projects/p/tasks/pull/release/batch", map[string]any{"lease_id": lease(pulls[1]), "taskIds": mixed})
	if data(r)["released_count"] != float64(batch/2) || data(r)["failed_count"] != float64(batch/2) {
		t.Fatalf("mixed release %+v", data(r))
	}
	rest := budget("batch confirm of the rest of a lease (no taskIds)", 3, http.StatusOK, http.MethodPost,
		"/api/v1/projects/p/tasks/pull/confirm/batch", map[string]any{"lease_id": lease(pulls[1])})
	if data(rest)["confirmed_count"] != float64(batch/2) {
		t.Fatalf("confirm of the rest %+v", data(rest))
	}
}

// TestTaskEchoTexts pins these TaskEcho answers: pull history and pull stats say
// 操作成功, and a batch release names a missing or unpulled task with TaskEcho's one reason.
func TestTaskEchoTexts(t *testing.T) {
	e := env(t)
	key := e.AdminKey
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("c", "pending")), http.StatusOK)
	createServerTask(t, e, "p", "", "s", nil)
	if m := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/s/pull/history", key, nil, http.StatusOK).Message; m != "操作成功" {
		t.Errorf("pull history message %q", m)
	}
	if m := call(t, e, http.MethodGet, "/api/v1/projects/p/tasks/pull/stats", key, nil, http.StatusOK).Message; m != "操作成功" {
		t.Errorf("pull stats message %q", m)
	}
	r := call(t, e, http.MethodPost, "/api/v1/projects/p/tasks/pull/release/batch", key, map[string]any{"taskIds": []string{"s", "nope"}}, http.StatusOK)
	for _, f := range r.Data["failed"].([]any) {
		if reason := f.(map[string]any)["reason"]; reason != "任务不存在或未被拉取" {
			t.Errorf("release batch reason %q", reason)
		}
	}
	if r.Data["failed_count"] != 2.0 {
		t.Errorf("release batch %+v", r.Data)
	}
}
