package pipeline_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// checkHealth runs the health-check activity once in the SDK's activity test environment (the
// activity heartbeats, so it needs an activity context).
func checkHealth(t *testing.T, h *harness) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(h.acts.PipelineCheckProviderHealth)
	if _, err := env.ExecuteActivity(h.acts.PipelineCheckProviderHealth); err != nil {
		t.Fatal(err)
	}
}

func healthOf(h *harness, ref string) map[string]any {
	return h.do("GET", "/api/v1/providers/"+ref, nil, 200)["health"].(map[string]any)
}

// The health check probes health_url with hysteresis and keeps hand-set statuses.
func TestHealthCheckMarksFailingProviderDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, vendors.Options{SlowDelay: 10 * time.Millisecond})
	h.do("PUT", "/api/v1/providers/aliyun_image_ai/health", map[string]any{"status": "down"}, 200)
	checkHealth(t, h)
	if s := healthOf(h, vendors.FailingVendor)["status"]; s != "up" {
		t.Fatalf("one failed probe took it %v", s)
	}
	checkHealth(t, h)
	if hh := healthOf(h, vendors.FailingVendor); hh["status"] != "down" || hh["consecutive_failures"] != 2.0 {
		t.Fatalf("failing vendor after two probes: %v", hh)
	}
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
	h := newHarness(t, vendors.Options{})
	cfg := *h.cfg
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
	handle, err := h.temporal.ScheduleClient().Create(ctx, s)
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
