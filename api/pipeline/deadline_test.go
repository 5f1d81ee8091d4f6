package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
)

// max_execution_time ends the run at its deadline, not when the running step's own timeout
// would, for eight tasks started together: a 4 s sync step, then an async step whose job never finishes and whose timeout alone
// would end it 4 s after the deadline. The task must fail with the max_execution_time reason
// within a second of the deadline (by 9 s after its creation), and the paid job the deadline left
// running stays on the step (vendor_task_id) and is named in the reason.
func TestMaxExecutionTimeEndsAsyncStepOnTime(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{SlowDelay: 4 * time.Second, PollsToComplete: 1 << 20})
	def := map[string]any{"name": "deadline_async", "version": "1.0.0", "schema": map[string]any{
		"max_execution_time": 8,
		"steps": []any{
			map[string]any{"name": "slow_process", "type": "sync_api", "provider_ref": vendors.SlowVendor, "endpoint": "/image/process",
				"input_mapping": map[string]any{"image_url": "${input_data.img}"}, "output_mapping": map[string]any{"url": "$.data.output_url"},
				"timeout_seconds": 6, "retry": map[string]any{"max_attempts": 1, "delay_seconds": 1}},
			map[string]any{"name": "generate", "type": "async_api", "provider_ref": "runninghub", "endpoint": "/workflow/execute",
				"input_mapping":  map[string]any{"image_url": "${steps[0].output.url}"},
				"output_mapping": map[string]any{"vendor_task_id": "$.task_id", "status": "$.status"},
				"polling": map[string]any{"status_endpoint": "/workflow/status/{vendor_task_id}", "interval_seconds": 3, "max_attempts": 10,
					"complete_statuses": []any{"success"}, "failed_statuses": []any{"failed"}},
				"timeout_seconds": 8},
		}}}
	h.do("POST", "/api/v1/pipelines", def, 201)
	// Under load: the tasks start together, so their steps, polls and deadlines overlap. When each
	// failed is read from its record (completed_at against created_at), not from when this test's
	// polling, one task after another, happened to see it.
	const tasks = 8
	ids := make([]string, tasks)
	for i := range ids {
		ids[i], _ = h.startTask("deadline_async", map[string]any{"img": "https://cos.example/i.jpg"})
	}
	for _, id := range ids {
		task := h.waitTask(id, time.Minute)
		mustContain(t, task["error_reason"], `Step "generate" failed: pipeline exceeded max_execution_time of 8s`)
		if took := recordedDuration(t, task); took > 9*time.Second {
			t.Errorf("task %s failed %s after its creation, want by 9s", id, took.Round(100*time.Millisecond))
		}
		steps := stepsOf(task)
		vid, _ := steps[1]["vendor_task_id"].(string)
		if steps[1]["status"] != "failed" || vid == "" || !strings.Contains(task["error_reason"].(string), vid) {
			t.Fatalf("step %v, reason %q: the submitted job must stay on the step and be named", steps[1], task["error_reason"])
		}
	}
	if err := h.waitWorkflow(ids[0]); err == nil {
		t.Fatal("the workflow succeeded")
	}
	h.record(ids[0], "deadline_ends_async_step")
}

// recordedDuration is a finished task's completed_at less its created_at.
func recordedDuration(t *testing.T, task map[string]any) time.Duration {
	t.Helper()
	created, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(task["created_at"]))
	completed, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(task["completed_at"]))
	if err1 != nil || err2 != nil {
		t.Fatalf("task times: created_at %v completed_at %v", task["created_at"], task["completed_at"])
	}
	return completed.Sub(created)
}
