package ui_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// submitTask is one task of a client push.
type submitTask struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Prompt string `json:"prompt"`
	Status string `json:"status"`
}

// apiCall calls the echo JSON API with the env's admin key and fails the test unless it answers 2xx.
func apiCall(t *testing.T, env *e2e.Env, method, path string, body any) *e2e.Response {
	t.Helper()
	r := env.Do(method, path, env.AdminKey, body)
	if r.Status/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r
}

// push submits a queue as a TaskEcho client does (projects and queues come into being this way).
func push(t *testing.T, env *e2e.Env, project, queue string, tasks ...submitTask) {
	t.Helper()
	apiCall(t, env, http.MethodPost, "/api/v1/submit", map[string]any{"project_id": project, "project_name": project + " name",
		"queue_id": queue, "queue_name": queue + " name", "tasks": tasks})
}

// pullQueue pulls a queue's server tasks through the JSON API, as a TaskEcho client does.
func pullQueue(t *testing.T, env *e2e.Env, project, queue string) (n int, leaseID string) {
	t.Helper()
	r := apiCall(t, env, http.MethodGet, "/api/v1/projects/"+url.PathEscape(project)+"/queues/"+url.PathEscape(queue)+"/tasks/pull", nil)
	var body struct {
		Data struct {
			Tasks   []map[string]any `json:"tasks"`
			LeaseID string           `json:"lease_id"`
		} `json:"data"`
	}
	r.JSON(t, &body)
	return len(body.Data.Tasks), body.Data.LeaseID
}
