package pipeline_test

import (
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
)

// The worker dies in the middle of an async_api poll loop and a new one takes over: the pipeline
// finishes from its history (durable timers) without submitting the vendor job again.
func TestWorkerRestartMidPollDoesNotResubmit(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{PollsToComplete: 4})
	name := h.publish("model_pose12_pipeline.json", func(d map[string]any) {
		d["name"] = "model_pose12_fast_poll"
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["polling"].(map[string]any)["interval_seconds"] = 1
	})
	id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/m.jpg", "model_type": "m", "style": "s"})
	deadline := time.Now().Add(time.Minute)
	for h.vendors.Calls("runninghub", "/workflow/status") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no poll happened")
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.StopWorker()
	polledBefore := h.vendors.Calls("runninghub", "/workflow/status")
	time.Sleep(2 * time.Second) // timers fire while no worker is running
	if n := h.vendors.Calls("runninghub", "/workflow/status"); n != polledBefore {
		t.Fatalf("polls continued without a worker: %d → %d", polledBefore, n)
	}
	h.StartWorker()
	task := h.waitTask(id, time.Minute)
	if task["status"] != "success" {
		t.Fatalf("task %v", task)
	}
	if n := h.vendors.Calls("runninghub", "/workflow/execute"); n != 1 {
		t.Fatalf("vendor job submitted %d times, want 1", n)
	}
	if n := h.vendors.Calls("runninghub", "/workflow/status"); n < 4 {
		t.Fatalf("only %d polls", n)
	}
	if err := h.waitWorkflow(id); err != nil {
		t.Fatal(err)
	}
	h.record(id, "model_pose12_worker_restart")
}

// max_execution_time bounds the whole run even when each step is inside its own timeout.
func TestMaxExecutionTimeFailsTask(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{SlowDelay: 1500 * time.Millisecond})
	h.silentFunction("silent-compositor")
	def := map[string]any{"name": "bounded", "version": "1.0.0", "schema": map[string]any{
		"max_execution_time": 3,
		"steps": []any{
			map[string]any{"name": "slow_process", "type": "sync_api", "provider_ref": vendors.SlowVendor, "endpoint": "/image/process",
				"input_mapping": map[string]any{"image_url": "${input_data.img}"}, "output_mapping": map[string]any{"url": "$.data.output_url"},
				"timeout_seconds": 3},
			map[string]any{"name": "wait_callback", "type": "scf", "scf_function": "silent-compositor",
				"input_mapping": map[string]any{"url": "${steps[0].output.url}"}, "output_mapping": map[string]any{"v": "$.output.v"},
				"timeout_seconds": 3},
		}}}
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, user := h.startTask("bounded", map[string]any{"img": "https://cos.example/i.jpg"})
	task := h.waitTask(id, time.Minute)
	mustContain(t, task["error_reason"], `Step "wait_callback" failed: pipeline exceeded max_execution_time of 3s`)
	_ = h.waitWorkflow(id)
	steps := stepsOf(h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200))
	if steps[0]["status"] != "success" || steps[1]["status"] != "failed" {
		t.Fatalf("steps %v", steps)
	}
	if q := quotaOf(h, user); q["remaining"] != 1.0 {
		t.Fatalf("quota %v", q)
	}
}

// The worker process is killed (SIGKILL, no graceful stop) in the middle of an async_api poll
// loop; a new worker finishes the pipeline from history and the vendor job is not submitted again.
func TestWorkerProcessKilledMidPoll(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{PollsToComplete: 5})
	h.StopWorker()
	child := h.StartWorkerProcess()
	name := h.publish("model_pose12_pipeline.json", func(d map[string]any) {
		d["name"] = "model_pose12_kill"
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["polling"].(map[string]any)["interval_seconds"] = 1
	})
	id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/m.jpg", "model_type": "m", "style": "s"})
	deadline := time.Now().Add(time.Minute)
	for h.vendors.Calls("runninghub", "/workflow/status") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the child worker never polled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The vendor counts a status request when it arrives, so the kill lands either while that
	// request is in flight (the poll activity dies with the process and the new worker retries it
	// after its start-to-close timeout, maxPollCallTimeout: the test then takes about a minute) or
	// while the loop sleeps on its durable timer. Either way the job is not submitted again.
	child.Kill()
	h.StartWorker()
	task := h.waitTask(id, 2*time.Minute)
	if task["status"] != "success" {
		t.Fatalf("task %v", task)
	}
	if n := h.vendors.Calls("runninghub", "/workflow/execute"); n != 1 {
		t.Fatalf("vendor job submitted %d times, want 1", n)
	}
	if out := stepsOf(task)[0]["output"].(map[string]any); len(out["result_urls"].([]any)) != 12 {
		t.Fatalf("output %v", out)
	}
}
