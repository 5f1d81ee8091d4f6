package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// appendConc is the burst: a TaskEcho client streams an agent's messages into a task without
// waiting for each answer (20 at once, as measured from a real client).
const appendConc = 20

// benchAppend: POST /api/v1/tasks/message from 20 concurrent clients, all into one task, against
// the same number of appends spread over as many distinct tasks of the same queue. The ratio says
// what contention on one task costs: 1.0 means an append into a busy task is as fast as one into
// an idle task. Every append must answer 200 and its message_id must be unique in its task.
func benchAppend(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "append burst", Unit: "appends"}
	if !r.hasRoute(ctx, "POST", "/api/v1/tasks/message") {
		res.Skipped = "POST /api/v1/tasks/message is not mounted"
		return []Result{res}
	}
	n := r.size(200, 40)
	res.N = n
	svc := r.echo
	project := "bench-append-" + suffix()
	if err := seedClientTasks(ctx, svc, project, n); err != nil {
		res.Skipped = "seeding failed: " + err.Error()
		return []Result{res}
	}
	m := r.meter(ctx)
	one, err := appendRun(ctx, r, project, n, func(int) string { return taskName(0) })
	if err != nil {
		res.Skipped = "one task: " + err.Error()
		return []Result{res}
	}
	m.charge(ctx, &res)
	res.Throughput, res.P50Ms, res.P99Ms = one.lat.fill(n, one.elapsed)
	spread, err := appendRun(ctx, r, project, n, taskName)
	b := baseline{name: fmt.Sprintf("%d appends into %d distinct tasks", n, n), err: err}
	if err == nil {
		b.tput, b.p50, b.p9 = spread.lat.fill(n, spread.elapsed)
	}
	b.apply(&res)
	res.Notes = fmt.Sprintf("%d concurrent clients, all into one task; slowest append %s (target 2 s); message_id 0..%d each handed out once",
		appendConc, slices.Max(one.lat).Round(time.Millisecond), n-1)
	return []Result{res}
}

func taskName(i int) string { return fmt.Sprintf("t-%04d", i) }

// seedClientTasks pushes one queue of n client tasks, as a TaskEcho client's first submit would.
func seedClientTasks(ctx context.Context, svc *taskecho.Server, project string, n int) error {
	tasks := make([]map[string]any, n)
	for i := range tasks {
		tasks[i] = map[string]any{"id": taskName(i), "name": taskName(i), "prompt": "bench", "status": "pending"}
	}
	body, err := json.Marshal(map[string]any{"project_id": project, "project_name": "bench", "queue_id": "burst.json",
		"queue_name": "burst.json", "tasks": tasks})
	if err != nil {
		return err
	}
	in, err := taskecho.ParseSubmit(body, time.Now())
	if err != nil {
		return err
	}
	_, err = svc.Intake.Submit(ctx, taskecho.Actor{Name: "bench-seed"}, in, taskecho.ConflictOverwrite)
	return err
}

type appended struct {
	lat     latencies
	elapsed time.Duration
}

// appendRun sends n appends, the i-th into task(i), and checks that no task handed out a
// message_id twice.
func appendRun(ctx context.Context, r *run, project string, n int, task func(int) string) (appended, error) {
	ids := make([]string, n)
	lat, elapsed, failed, err := runLoad(ctx, n, appendConc, func(ctx context.Context, i int) error {
		var out struct {
			Data struct {
				MessageID int `json:"message_id"`
			} `json:"data"`
		}
		body := map[string]any{"project_id": project, "queue_id": "burst.json", "task_id": task(i),
			"role": "assistant", "content": fmt.Sprint("append ", i)}
		if _, err := call(ctx, "POST", r.app.apiURL+"/api/v1/tasks/message", r.adminKey, body, &out); err != nil {
			return err
		}
		ids[i] = fmt.Sprint(task(i), "/", out.Data.MessageID)
		return nil
	})
	if failed > 0 {
		return appended{}, fmt.Errorf("%d of %d appends failed: %w", failed, n, err)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return appended{}, fmt.Errorf("message %s handed out twice", id)
		}
		seen[id] = true
	}
	return appended{lat: lat, elapsed: elapsed}, nil
}
