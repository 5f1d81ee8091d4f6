package taskecho_test

import (
	"net/http"
	"regexp"
	"testing"
)

var isoMillis = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: missing field %q in %v", what, k, m)
		}
	}
}

func wantISO(t *testing.T, what string, v any) {
	t.Helper()
	s, _ := v.(string)
	if !isoMillis.MatchString(s) {
		t.Fatalf("%s = %v, want ISO-8601 with milliseconds and Z", what, v)
	}
}

// TestTaskEchoClientContract replays the TaskEcho client's four calls (cursor-flow's
// taskecho-client.js: X-API-Key, queue_id = the task file name with .json) and the reference's
// response shapes, field for field.
func TestTaskEchoClientContract(t *testing.T) {
	e := env(t)
	const project = "6f1c2b0e-8a4e-4c1d-9b0a-3e2f1d0c9b8a"
	const queue = "task.json"
	key := e.AdminKey

	// POST /submit: new queue → created_tasks = tasks_count.
	first := call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody(project, queue,
		map[string]any{"id": "1", "name": "one", "prompt": "first", "spec_file": "spec.md", "status": "PENDING",
			"report": nil, "messages": []any{map[string]any{"role": "user", "content": "hi", "session_id": "s1"}}, "logs": []any{}},
		ctask("2", "pending")), http.StatusOK)
	if first.Message != "提交成功" || first.Data["project_id"] != project || first.Data["queue_id"] != queue ||
		first.Data["tasks_count"] != 2.0 || first.Data["created_tasks"] != 2.0 || first.Data["updated_tasks"] != 0.0 {
		t.Fatalf("submit answer %+v", first)
	}
	wantISO(t, "timestamp", first.Timestamp)
	// Existing queue → updated_tasks = tasks_count.
	again := call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody(project, queue, ctask("1", "pending"), ctask("2", "pending")), http.StatusOK)
	if again.Data["created_tasks"] != 0.0 || again.Data["updated_tasks"] != 2.0 {
		t.Fatalf("resubmit counts %+v", again.Data)
	}

	// POST /tasks/message: 0-based message_id, UPPERCASE role, session_id.
	msg := call(t, e, http.MethodPost, "/api/v1/tasks/message", key, map[string]any{"project_id": project, "queue_id": queue,
		"task_id": "1", "role": "Assistant", "content": "  chunk  ", "session_id": "s9"}, http.StatusOK)
	if msg.Message != "消息追加成功" || msg.Data["message_id"] != 0.0 || msg.Data["role"] != "ASSISTANT" ||
		msg.Data["content"] != "chunk" || msg.Data["session_id"] != "s9" {
		t.Fatalf("message answer %+v", msg)
	}
	wantISO(t, "created_at", msg.Data["created_at"])

	// POST /tasks/log.
	lg := call(t, e, http.MethodPost, "/api/v1/tasks/log", key, map[string]any{"project_id": project, "queue_id": queue,
		"task_id": "1", "content": "line 1"}, http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/tasks/log", key, map[string]any{"project_id": project, "queue_id": queue,
		"task_id": "1", "content": "line 2"}, http.StatusOK)
	if lg.Message != "日志追加成功" || lg.Data["log_id"] != 0.0 || lg.Data["content"] != "line 1" {
		t.Fatalf("log answer %+v", lg)
	}

	// PATCH /tasks/status: UPPERCASE status and previous_status.
	st := call(t, e, http.MethodPatch, "/api/v1/tasks/status", key, map[string]any{"project_id": project, "queue_id": queue,
		"task_id": "1", "status": "done"}, http.StatusOK)
	if st.Message != "状态更新成功" || st.Data["task_id"] != "1" || st.Data["status"] != "DONE" || st.Data["previous_status"] != "PENDING" {
		t.Fatalf("status answer %+v", st)
	}
	wantISO(t, "updated_at", st.Data["updated_at"])

	// GET …/queues/{queueId}/tasks/{taskId}: lowercase roles, session_id/created_at, logs newest first, pull fields.
	d := call(t, e, http.MethodGet, "/api/v1/projects/"+project+"/queues/"+queue+"/tasks/1", key, nil, http.StatusOK)
	wantKeys(t, "queue task detail", d.Data, "id", "name", "prompt", "spec_file", "status", "report", "tags", "source", "created_at",
		"updated_at", "server_modified_at", "pulled_at", "pulled_by", "priority", "expires_at", "pull_history", "messages", "logs")
	if d.Data["status"] != "done" || d.Data["source"] != "client" {
		t.Fatalf("queue task detail %+v", d.Data)
	}
	msgs := d.Data["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "assistant" || msgs[0].(map[string]any)["session_id"] != "s9" {
		t.Fatalf("queue task detail messages %+v (the resubmit replaced the first message list)", msgs)
	}
	logs := d.Data["logs"].([]any)
	if len(logs) != 2 || logs[0].(map[string]any)["content"] != "line 2" {
		t.Fatalf("queue task detail logs %+v, want newest first", logs)
	}

	// Paginated envelope with camelCase pagination keys.
	list := call(t, e, http.MethodGet, "/api/v1/projects/"+project+"/queues/"+queue+"/tasks?pageSize=1", key, nil, http.StatusOK)
	pg := list.Data["pagination"].(map[string]any)
	if list.Message != "查询成功" || pg["page"] != 1.0 || pg["pageSize"] != 1.0 || pg["total"] != 2.0 || pg["totalPages"] != 2.0 {
		t.Fatalf("pagination %+v", list.Data)
	}
	proj := call(t, e, http.MethodGet, "/api/v1/projects/"+project, key, nil, http.StatusOK)
	wantKeys(t, "project detail", proj.Data, "id", "project_id", "name", "displayTitle", "metadata", "clientInfo", "gitInfo", "queue_count",
		"task_count", "task_stats", "last_task_at", "created_at", "updated_at")
	if proj.Data["task_count"] != 2.0 || proj.Data["queue_count"] != 1.0 {
		t.Fatalf("project detail counts %+v", proj.Data)
	}
	chk := call(t, e, http.MethodGet, "/api/v1/projects/"+project+"/queues/"+queue+"/tasks/check", key, nil, http.StatusOK)
	wantKeys(t, "queue tasks check", chk.Data, "version", "last_updated_at", "count")
}

// TestTaskEchoErrorsAreJSON checks the error side of the contract: every failure is the JSON
// envelope with TaskEcho's codes, invalid JSON included.
func TestTaskEchoErrorsAreJSON(t *testing.T) {
	e := env(t)
	key := e.AdminKey
	wantError(t, call(t, e, http.MethodPost, "/api/v1/submit", "", submitBody("p", "q", ctask("1", "pending")), http.StatusUnauthorized), "INVALID_API_KEY")
	unknown := call(t, e, http.MethodPost, "/api/v1/submit", "sk-nope", submitBody("p", "q", ctask("1", "pending")), http.StatusUnauthorized)
	wantError(t, unknown, "INVALID_API_KEY")
	if unknown.Error.Message != "缺少认证信息（Token 或 API Key）" {
		t.Fatalf("unknown key message %q, want TaskEcho's", unknown.Error.Message)
	}
	bad := call(t, e, http.MethodPost, "/api/v1/submit", key, []byte(`{"project_id": "p", `), http.StatusBadRequest)
	wantError(t, bad, "VALIDATION_ERROR")

	// Validation collects every error; field/reason name the first.
	noPrompt := ctask("1", "pending")
	noPrompt["prompt"] = ""
	v := call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", noPrompt, ctask("1", "weird")), http.StatusBadRequest)
	wantError(t, v, "VALIDATION_ERROR")
	if v.Error.Message != "请求参数验证失败" || v.Error.Details["field"] != "tasks[0].prompt" || len(v.Error.Details["all_errors"].([]any)) < 2 {
		t.Fatalf("validation details %+v", v.Error)
	}

	// 404s carry the ids.
	nf := call(t, e, http.MethodPost, "/api/v1/tasks/log", key, map[string]any{"project_id": "nope", "queue_id": "q", "task_id": "t", "content": "x"}, http.StatusNotFound)
	wantError(t, nf, "RESOURCE_NOT_FOUND")
	if nf.Error.Message != "项目不存在" || nf.Error.Details["task_id"] != "t" {
		t.Fatalf("404 %+v", nf.Error)
	}
	call(t, e, http.MethodPost, "/api/v1/submit", key, submitBody("p", "q", ctask("1", "pending")), http.StatusOK)
	nt := call(t, e, http.MethodPatch, "/api/v1/tasks/status", key, map[string]any{"project_id": "p", "queue_id": "q", "task_id": "zz", "status": "done"}, http.StatusNotFound)
	if nt.Error.Message != "任务不存在" {
		t.Fatalf("404 task %+v", nt.Error)
	}
	bs := call(t, e, http.MethodPatch, "/api/v1/tasks/status", key, map[string]any{"project_id": "p", "queue_id": "q", "task_id": "1", "status": "running"}, http.StatusBadRequest)
	if bs.Error.Details["reason"] != "status 必须是 pending、done 或 error" {
		t.Fatalf("status validation %+v", bs.Error)
	}
}

// TestQueueIDsWithDotsAndSlashes: the client's queue ids end in .json and the UI encodes "/" as
// %2F inside one segment.
func TestQueueIDsWithDotsAndSlashes(t *testing.T) {
	e := env(t)
	const queue = ".flow/task-test.json"
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("p", queue, ctask("a", "pending")), http.StatusOK)
	q := call(t, e, http.MethodGet, "/api/v1/projects/p/queues/"+seg(queue), e.AdminKey, nil, http.StatusOK)
	if q.Data["queue_id"] != queue {
		t.Fatalf("queue %+v", q.Data)
	}
	call(t, e, http.MethodGet, "/api/v1/projects/p/queues/"+seg(queue)+"/tasks/a", e.AdminKey, nil, http.StatusOK)
}
