package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/waiting"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// TestExecutionExplainsItself: a pipeline's execution carries its static summary and details
// (DescribeWorkflowExecution), its current details say what the step waits for and change when
// it finishes, and GET answers waiting_for while the task runs and none once it is final.
func TestExecutionExplainsItself(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.silentFunction("silent-compositor")
	var def map[string]any
	_ = json.Unmarshal([]byte(scfOnly), &def)
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, user := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })

	wfID := pipelinewf.WorkflowID(id)
	ex := h.Explain(wfID)
	if want := "pipeline scf_only@latest · user " + user + " · feature feat · task " + id; ex.Summary != want {
		t.Errorf("static summary = %q, want %q", ex.Summary, want)
	}
	for _, want := range []string{"Pipeline task `" + id + "`", "/ui/console/pipelines/" + id, "GET /api/v1/pipeline-tasks/" + id} {
		mustContain(t, ex.Details, want)
	}
	e2e.Eventually(t, 10*time.Second, "current details to show the callback wait", func() bool {
		return strings.Contains(h.Explain(wfID).Current, "step 1/1 compose (scf silent-compositor): waiting for the callback")
	})
	mustContain(t, h.Explain(wfID).Current, ", until ")

	task := h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200)
	w, _ := task["waiting_for"].(map[string]any)
	if w["reason"] != waiting.Callback || w["until"] == nil || w["since"] == nil {
		t.Fatalf("waiting_for while the callback is due = %v", task["waiting_for"])
	}
	mustContain(t, w["detail"], "silent-compositor")

	raw := []byte(`{"status":"success","output":{"video_url":"https://v/1.mp4"}}`)
	h.doRaw("POST", "/api/internal/tasks/"+id+"/steps/0/callback", raw, 200,
		signed{secret: testSecret, ts: time.Now(), v2: true, taskID: id, stepIndex: "0", sentBody: raw}.headers())
	task = h.waitTask(id, time.Minute)
	if task["status"] != pipeline.StatusSuccess || task["waiting_for"] != nil {
		t.Fatalf("finished task: status %v, waiting_for %v", task["status"], task["waiting_for"])
	}
	if err := h.waitWorkflow(id); err != nil {
		t.Fatal(err)
	}
	if cur := h.Explain(wfID).Current; cur != "success: 1 steps done" {
		t.Fatalf("current details after success = %q", cur)
	}
	h.record(id, "scf_callback_explained")
}
