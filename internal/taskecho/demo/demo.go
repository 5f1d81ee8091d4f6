// Package demo seeds the echo demo project that `make dev` and `starter echo seed-demo` offer
// to a TaskEcho client, through the task server's own push and create operations.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// ProjectID is the project Seed fills.
const ProjectID = "demo"

// queueID is the demo project's queue.
const queueID = "demo.json"

// Seed fills the demo project for `make dev`: a queue pushed as a TaskEcho client would, plus
// server tasks (project level and in the queue, with priorities) that a client can pull. Running
// it again leaves existing tasks alone.
func Seed(ctx context.Context, svc *taskecho.Server) (string, error) {
	body, _ := json.Marshal(map[string]any{
		"project_id": ProjectID, "project_name": "Demo project", "queue_id": queueID, "queue_name": queueID,
		"clientInfo": map[string]any{"username": "dev", "hostname": "localhost", "project_path": "~/demo"},
		"tasks": []map[string]any{
			{"id": "client-1", "name": "Pushed by a client", "prompt": "Summarise the README", "status": "done"},
			{"id": "client-2", "name": "Still pending", "prompt": "Write the changelog", "status": "pending"},
		},
	})
	in, err := taskecho.ParseSubmit(body, svc.Now())
	if err != nil {
		return "", fmt.Errorf("seed demo: %w", err)
	}
	dev := taskecho.Actor{Name: "seed-demo"}
	if _, err := svc.Intake.Submit(ctx, dev, in, taskecho.ConflictOverwrite); err != nil {
		return "", fmt.Errorf("seed demo submit: %w", err)
	}
	queue := queueID
	tasks := []struct {
		queue *string
		body  string
	}{
		{nil, `{"taskId":"server-high","name":"Urgent review","prompt":"Review the open pull request","priority":"high","tags":["review"]}`},
		{nil, `{"taskId":"server-medium","name":"Triage issues","prompt":"Label new issues","priority":"medium"}`},
		{nil, `{"taskId":"server-low","name":"Tidy docs","prompt":"Fix typos in docs/","priority":"low","tags":["docs"]}`},
		{&queue, `{"taskId":"server-q1","name":"Queue task","prompt":"Run the test suite","priority":9}`},
		{&queue, `{"taskId":"server-q2","name":"Queue task 2","prompt":"Update dependencies"}`},
	}
	for _, t := range tasks {
		f, err := taskecho.ParseTaskCreate([]byte(t.body))
		if err != nil {
			return "", fmt.Errorf("seed demo task: %w", err)
		}
		if _, err := svc.Admin.CreateTask(ctx, dev, ProjectID, t.queue, f); err != nil && !taskecho.IsKind(err, taskecho.KindDuplicate) {
			return "", fmt.Errorf("seed demo task %s: %w", f.TaskID, err)
		}
	}
	return ProjectID, nil
}

// PullCurls are the commands `make dev` prints to pull the demo tasks: the project-level ones,
// then the queue's (a project pull never hands out a queue's tasks).
func PullCurls(baseURL, apiKey string) []string {
	pull := func(path string) string {
		return fmt.Sprintf("curl -s -H \"X-API-Key: %s\" '%s/api/v1/projects/%s/%stasks/pull?limit=10'", apiKey, baseURL, ProjectID, path)
	}
	return []string{pull(""), pull("queues/" + url.PathEscape(queueID) + "/")}
}
