package pipeline_test

import (
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Idempotency-Key: the same key and body answer the same task (200), while it runs and after it
// finished; the key with another body is a 409; the quota is charged once. Without the header
// every request is a new task.
func TestIdempotencyKeyOnTaskCreation(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	user := testenv.Unique("idem-")
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 5}, 200)
	body := func(img string) map[string]any {
		return map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat", "input_data": map[string]any{"input_image": img}}
	}
	hdr := func(key string) map[string]string {
		return map[string]string{"X-API-Key": h.AdminKey, "Idempotency-Key": key}
	}
	key := testenv.Unique("key-")
	first := h.doRaw("POST", "/api/v1/pipeline-tasks", body("https://cos.example/a.jpg"), 201, hdr(key))
	again := h.doRaw("POST", "/api/v1/pipeline-tasks", body("https://cos.example/a.jpg"), 200, hdr(key))
	if first["task_id"] != again["task_id"] || first["task_id"] == nil {
		t.Fatalf("first %v again %v", first, again)
	}
	out := h.doRaw("POST", "/api/v1/pipeline-tasks", body("https://cos.example/other.jpg"), 409, hdr(key))
	if out["error"].(map[string]any)["code"] != "IDEMPOTENCY_CONFLICT" {
		t.Fatalf("%v", out)
	}
	id := first["task_id"].(string)
	if task := h.waitTask(id, time.Minute); task["status"] != "success" {
		t.Fatalf("task %v", task)
	}
	if err := h.waitWorkflow(id); err != nil {
		t.Fatal(err)
	}
	late := h.doRaw("POST", "/api/v1/pipeline-tasks", body("https://cos.example/a.jpg"), 200, hdr(key))
	if late["task_id"] != id || late["status"] != "success" {
		t.Fatalf("a retry after the task finished: %v", late)
	}
	h.doRaw("POST", "/api/v1/pipeline-tasks", body("https://cos.example/other.jpg"), 409, hdr(key))
	if q := quotaOf(h, user); q["consumed"] != 1.0 || q["remaining"] != 4.0 {
		t.Fatalf("quota charged more than once: %v", q)
	}
	// No key: two requests, two tasks.
	a := h.do("POST", "/api/v1/pipeline-tasks", body("https://cos.example/a.jpg"), 201)
	b := h.do("POST", "/api/v1/pipeline-tasks", body("https://cos.example/a.jpg"), 201)
	if a["task_id"] == b["task_id"] {
		t.Fatal("requests without a key share a task")
	}
	h.doRaw("POST", "/api/v1/pipeline-tasks", body("x"), 400, hdr("has space"))
}

// A key whose request was refused (no quota) holds no task: once the quota is raised the same
// key creates the task.
func TestIdempotencyKeyAfterRefusal(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	user := testenv.Unique("idem-refused-")
	body := map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat", "input_data": map[string]any{"input_image": "a"}}
	hdr := map[string]string{"X-API-Key": h.AdminKey, "Idempotency-Key": testenv.Unique("key-")}
	h.doRaw("POST", "/api/v1/pipeline-tasks", body, 402, hdr)
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	created := h.doRaw("POST", "/api/v1/pipeline-tasks", body, 201, hdr)
	if task := h.waitTask(created["task_id"].(string), time.Minute); task["status"] != "success" {
		t.Fatalf("task %v", task)
	}
}
