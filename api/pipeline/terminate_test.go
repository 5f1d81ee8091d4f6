package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// A pipeline task whose execution is terminated from outside (temporal workflow terminate, the Web
// UI) answers terminated, with who and why, within seconds; the record follows (guarded write).
func TestTerminatedExecutionShowsTerminated(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.silentFunction("silent-compositor")
	var def map[string]any
	_ = json.Unmarshal([]byte(scfOnly), &def)
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, _ := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	if err := h.Platform.Temporal.TerminateWorkflow(h.Context(), pipelinewf.WorkflowID(id), "", "operator: bad input"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var task map[string]any
	for time.Now().Before(deadline) {
		if task = h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200); task["status"] == pipeline.StatusTerminated {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if task["status"] != pipeline.StatusTerminated {
		t.Fatalf("10 s after the terminate the task says %v", task["status"])
	}
	reason, _ := task["error_reason"].(string)
	if !strings.HasPrefix(reason, "workflow terminated by ") || !strings.HasSuffix(reason, ": operator: bad input") {
		t.Fatalf("error_reason %q: want who and why", reason)
	}
	stored, err := pipelinedb.New(h.Platform.Mongo).GetTask(h.Context(), id)
	if err != nil || stored.Status != pipeline.StatusTerminated {
		t.Fatalf("pipeline_tasks after the terminate: %+v %v", stored, err)
	}
}

// The worker's reconciler fixes a terminated task's record without anyone reading it (what lists
// and the console show): one visibility list per pass, a guarded write per task.
func TestReconcilerFollowsATerminatedTaskUnread(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{}, func(c *config.Config) { c.Worker.ReconcileInterval = time.Second })
	h.silentFunction("silent-compositor")
	var def map[string]any
	_ = json.Unmarshal([]byte(scfOnly), &def)
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, _ := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	if err := h.Platform.Temporal.TerminateWorkflow(h.Context(), pipelinewf.WorkflowID(id), "", "operator: cleanup"); err != nil {
		t.Fatal(err)
	}
	store := pipelinedb.New(h.Platform.Mongo)
	e2e.Eventually(t, 15*time.Second, "the reconciler to mark the task terminated", func() bool {
		task, err := store.GetTask(h.Context(), id)
		return err == nil && task.Status == pipeline.StatusTerminated && strings.HasSuffix(task.ErrorReason, ": operator: cleanup")
	})
}
