package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
)

// With no worker to admit it, task creation does not hang: it answers 503 with Retry-After once
// its bounded wait for the admission is over. The workflow had started by then (start and update
// are one request; only the wait for the answer ran out), so the 503 names the task, and a retry
// with the same Idempotency-Key, once a worker runs, answers that task: one task, one quota unit,
// never a second task nor a half-made one.
func TestTaskCreationWaitsForAdmissionABoundedTime(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	user := testenv.Unique("unadmitted-")
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 5}, 200)
	h.StopWorker()
	key := testenv.Unique("key-")
	hdr := http.Header{"Idempotency-Key": {key}}
	body := map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat", "input_data": map[string]any{"input_image": "x"}}
	start := time.Now()
	r := h.DoHeader(http.MethodPost, "/api/v1/pipeline-tasks", h.AdminKey, body, hdr)
	took := time.Since(start)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("no worker: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if took > 40*time.Second {
		t.Errorf("answered after %v", took)
	}
	var refused struct {
		Error struct {
			Details struct {
				TaskID string `json:"task_id"`
			} `json:"details"`
		} `json:"error"`
	}
	r.JSON(t, &refused)
	id := refused.Error.Details.TaskID
	if id == "" {
		t.Fatalf("the 503 does not name the task: %s", r.Body)
	}

	h.StartWorker()
	retry := h.DoHeader(http.MethodPost, "/api/v1/pipeline-tasks", h.AdminKey, body, hdr)
	var created struct {
		TaskID string `json:"task_id"`
	}
	retry.JSON(t, &created)
	if (retry.Status != http.StatusOK && retry.Status != http.StatusCreated) || created.TaskID != id {
		t.Fatalf("retry with the same key: %d %s, want the task %s", retry.Status, retry.Body, id)
	}
	if task := h.waitTask(id, time.Minute); task["status"] != pipeline.StatusSuccess {
		t.Fatalf("task %v", task)
	}
	if q := quotaOf(h, user); q["consumed"] != 1.0 {
		t.Fatalf("one task should be charged once: %v", q)
	}
}
