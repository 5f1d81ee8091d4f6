package pipeline_test

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/worker"
)

// Worker Versioning: a PipelineWorkflow is Pinned, so a task started on build A finishes on build
// A after build B becomes the deployment's current version, while a task started after that runs
// on B. Both builds' workers run in this process on the same task queue.
func TestPinnedPipelineFinishesOnItsBuild(t *testing.T) {
	t.Parallel()
	deployment := testenv.Unique("taskloom-")
	h := newEnv(t, vendors.Options{PollsToComplete: 5}, func(c *config.Config) {
		c.Temporal.WorkerVersioning, c.Temporal.DeploymentName, c.Temporal.BuildIDOverride = true, deployment, "build-a"
	})
	b, err := worker.NewBuild(h.Platform, h.EchoService, "build-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	ctx, cancel := context.WithTimeout(h.Context(), time.Minute)
	defer cancel()
	if err := worker.SetCurrentVersion(ctx, h.Platform.Temporal, deployment, "build-a"); err != nil {
		t.Fatal(err)
	}
	name := h.publish("model_pose12_pipeline.json", func(d map[string]any) {
		d["name"] = "model_pose12_versioned"
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["polling"].(map[string]any)["interval_seconds"] = 1
	})
	input := map[string]any{"input_image": "https://cos.example/m.jpg", "model_type": "m", "style": "s"}
	onA, _ := h.startTask(name, input)
	for h.vendors.Calls("runninghub", "/workflow/status") < 1 {
		if ctx.Err() != nil {
			t.Fatal("the task on build A never polled its job")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := worker.SetCurrentVersion(ctx, h.Platform.Temporal, deployment, "build-b"); err != nil {
		t.Fatal(err)
	}
	onB, _ := h.startTask(name, input)
	for id, build := range map[string]string{onA: "build-a", onB: "build-b"} {
		if task := h.waitTask(id, time.Minute); task["status"] != pipeline.StatusSuccess {
			t.Fatalf("task %s: %v", id, task)
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		assertRanOn(t, h, id, build)
	}
}

// assertRanOn checks that task id's workflow is pinned to build and that every workflow task of
// its history was completed by a worker of that build.
func assertRanOn(t *testing.T, h *pipelineEnv, taskID, build string) {
	t.Helper()
	wid := pipeline.WorkflowID(taskID)
	desc, err := h.Platform.Temporal.DescribeWorkflowExecution(h.Context(), wid, "")
	if err != nil {
		t.Fatal(err)
	}
	vi := desc.GetWorkflowExecutionInfo().GetVersioningInfo()
	if vi.GetBehavior() != enumspb.VERSIONING_BEHAVIOR_PINNED || vi.GetDeploymentVersion().GetBuildId() != build {
		t.Fatalf("%s: versioning %v, want pinned to %s", wid, vi, build)
	}
	it := h.Platform.Temporal.GetWorkflowHistory(h.Context(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	tasks := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			tasks++
			if got := a.GetDeploymentVersion().GetBuildId(); got != build {
				t.Fatalf("%s: workflow task %d completed by build %q, want %s", wid, ev.GetEventId(), got, build)
			}
		}
	}
	if tasks < 3 {
		t.Fatalf("%s: %d workflow tasks", wid, tasks)
	}
}
