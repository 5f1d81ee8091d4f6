package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// checkHealth runs ProviderHealthWorkflow once on the worker, as a tick of the schedule does, and
// returns its report and workflow ID.
func checkHealth(t *testing.T, h *pipelineEnv) (*pipeline.HealthReport, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.Context(), time.Minute)
	defer cancel()
	run, err := h.Platform.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testenv.Unique("pipeline-health-check-"),
		TaskQueue: h.Config.Temporal.TaskQueue}, pipelinewf.ProviderHealthWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	var rep pipeline.HealthReport
	if err := run.Get(ctx, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep, run.GetID()
}

func healthOf(h *pipelineEnv, ref string) map[string]any {
	return h.do("GET", "/api/v1/providers/"+ref, nil, 200)["health"].(map[string]any)
}

// The health check probes health_url with hysteresis and keeps hand-set statuses.
func TestHealthCheckMarksFailingProviderDown(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{SlowDelay: 10 * time.Millisecond})
	h.do("PUT", "/api/v1/providers/aliyun_image_ai/health", map[string]any{"status": "down"}, 200)
	checkHealth(t, h)
	if s := healthOf(h, vendors.FailingVendor)["status"]; s != "up" {
		t.Fatalf("one failed probe took it %v", s)
	}
	rep, id := checkHealth(t, h)
	if hh := healthOf(h, vendors.FailingVendor); hh["status"] != "down" || hh["consecutive_failures"] != 2.0 {
		t.Fatalf("failing vendor after two probes: %v", hh)
	}
	if len(rep.Changed) != 1 || !strings.HasPrefix(rep.Changed[0], vendors.FailingVendor+": up → down") {
		t.Fatalf("report %+v", rep)
	}
	histories.Record(t, h.Platform.Temporal, "pipeline", id, "", "provider_health_marks_down")
	if s := healthOf(h, "tencent_cloud_infinite")["status"]; s != "up" {
		t.Fatalf("healthy vendor %v", s)
	}
	if s := healthOf(h, "aliyun_image_ai")["status"]; s != "down" {
		t.Fatalf("pinned status overwritten: %v", s)
	}
	h.vendors.SetMode(vendors.FailingVendor, vendors.ModeOK)
	checkHealth(t, h)
	checkHealth(t, h)
	if s := healthOf(h, vendors.FailingVendor)["status"]; s != "up" {
		t.Fatalf("recovered vendor still %v", s)
	}
}

// The schedule `starter schedules apply` creates runs ProviderHealthWorkflow on the worker.
func TestHealthScheduleRunsTheCheck(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	cfg := *h.Config
	cfg.Pipeline.HealthInterval = time.Hour
	opts := pipelinewf.ScheduleOptions(&cfg)
	if len(opts) != 1 || opts[0].ID != pipelinewf.HealthScheduleID {
		t.Fatalf("schedules %+v", opts)
	}
	s := opts[0]
	s.ID = testenv.Unique("pipeline-health-test-")
	s.Action.(*client.ScheduleWorkflowAction).ID = s.ID
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	handle, err := h.Platform.Temporal.ScheduleClient().Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = handle.Delete(context.Background()) })
	before := healthOf(h, vendors.FailingVendor)["last_check_at"]
	if err := handle.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	for healthOf(h, vendors.FailingVendor)["last_check_at"] == before {
		if ctx.Err() != nil {
			t.Fatal("the scheduled health check never ran")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
