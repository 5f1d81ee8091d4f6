package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// With no worker to admit it, task creation does not hang: it answers 503 with Retry-After once
// its bounded wait for the admission is over.
func TestTaskCreationWaitsForAdmissionABoundedTime(t *testing.T) {
	t.Parallel()
	env := e2e.NewWithoutWorker(t)
	start := time.Now()
	r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
		"pipeline": "basic_clean_pipeline", "user_id": "u", "feature_id": "f", "input_data": map[string]any{"input_image": "x"}})
	took := time.Since(start)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("no worker: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if took > 40*time.Second {
		t.Errorf("answered after %v", took)
	}
}
