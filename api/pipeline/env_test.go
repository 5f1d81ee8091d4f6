package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/worker"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// watermarkURL is WATERMARK_URL in this test process (on the default PIPELINE_ENV_ALLOWLIST): the
// collection video example's last step reads it through ${env.WATERMARK_URL}.
const watermarkURL = "https://fake-cos.example/brand/watermark.png"

func TestMain(m *testing.M) {
	if err := os.Setenv("WATERMARK_URL", watermarkURL); err != nil {
		panic(err)
	}
	e2e.Main(m)
}

const testSecret = "pipeline-test-secret"

// pipelineEnv is the whole application (internal/testenv/e2e) with the fake vendors and fake SCF
// registered as its providers and functions, and the helpers the pipeline tests share.
type pipelineEnv struct {
	*e2e.Env
	t         *testing.T
	vendors   *vendors.Server
	workflows *pipelinewf.Client
}

func newEnv(t *testing.T, vopts vendors.Options, opts ...e2e.Option) *pipelineEnv {
	t.Helper()
	vopts.Secret = []byte(testSecret)
	vs, err := vendors.Start("127.0.0.1:0", vopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	env := e2e.New(t, append([]e2e.Option{func(c *config.Config) {
		c.Pipeline.CallbackSecret = testSecret
		c.Crawl.Consumers = false // not needed here, and each one would join the shared consumer group
	}}, opts...)...)
	h := &pipelineEnv{Env: env, t: t, vendors: vs,
		workflows: &pipelinewf.Client{Temporal: env.Platform.Temporal, TaskQueue: env.Config.Temporal.TaskQueue}}
	for _, pr := range vs.Providers() {
		h.do("PUT", "/api/v1/providers/"+pr.Ref, map[string]any{"base_url": pr.BaseURL, "health_url": pr.HealthURL}, 200)
	}
	for _, f := range vs.Functions() {
		h.do("PUT", "/api/v1/functions/"+f.Name, map[string]any{"invoke_url": f.InvokeURL}, 200)
	}
	return h
}

// do sends a request with the admin key and checks the status; it returns the decoded body.
func (h *pipelineEnv) do(method, path string, body any, want int) map[string]any {
	h.t.Helper()
	return h.doRaw(method, path, body, want, map[string]string{"X-API-Key": h.AdminKey})
}

// doRaw sends a request with exactly these headers (none: no API key) and checks the status.
func (h *pipelineEnv) doRaw(method, path string, body any, want int, headers map[string]string) map[string]any {
	h.t.Helper()
	hdr := http.Header{}
	for k, v := range headers {
		hdr.Set(k, v)
	}
	r := h.DoHeader(method, path, "", body, hdr)
	if r.Status != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	var out map[string]any
	_ = json.Unmarshal(r.Body, &out)
	return out
}

// publish posts a schema file from testdata/pipelines (optionally edited) and returns its name.
func (h *pipelineEnv) publish(file string, edit func(d map[string]any)) string {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "pipelines", file))
	if err != nil {
		h.t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		h.t.Fatal(err)
	}
	if edit != nil {
		edit(d)
	}
	h.do("POST", "/api/v1/pipelines", d, 201)
	return d["name"].(string)
}

// startTask grants one unit of quota and starts a task of the named pipeline; it returns the task
// id and the user.
func (h *pipelineEnv) startTask(name string, input map[string]any) (taskID, user string) {
	h.t.Helper()
	user = testenv.Unique("user-")
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	out := h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "user_id": user,
		"feature_id": "feat", "input_data": input}, 201)
	return out["task_id"].(string), user
}

// waitTask polls the task until it is success or failed.
func (h *pipelineEnv) waitTask(taskID string, within time.Duration) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		out := h.do("GET", "/api/v1/pipeline-tasks/"+taskID, nil, 200)
		if s := out["status"]; s == pipeline.StatusSuccess || s == pipeline.StatusFailed {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("task %s did not finish within %s", taskID, within)
	return nil
}

// waitWorkflow waits for the task's workflow to close (so bookkeeping after the task row is
// done) and returns how it ended.
func (h *pipelineEnv) waitWorkflow(taskID string) error {
	ctx, cancel := context.WithTimeout(h.Context(), time.Minute)
	defer cancel()
	return h.workflows.Wait(ctx, taskID)
}

// record saves the task's workflow history as testdata/histories/pipeline/<name>.json when
// RECORD_HISTORIES is set.
func (h *pipelineEnv) record(taskID, name string) {
	h.t.Helper()
	histories.Record(h.t, h.Platform.Temporal, "pipeline", pipelinewf.WorkflowID(taskID), "", name)
}

// activities are the pipeline activities over this env's database, as the worker builds them, for
// a test that runs one directly.
func (h *pipelineEnv) activities() *pipelineact.Activities {
	return worker.PipelineActivities(h.Config, h.Platform.Mongo, h.Platform.Log, h.Platform.Metrics)
}

// metrics are the worker's pipeline series (the same registry, so the same counters).
func (h *pipelineEnv) metrics() *pipelineprom.Metrics { return pipelineprom.New(h.Platform.Metrics) }

// silentFunction registers an SCF function that accepts invocations and never calls back, so a
// test can send the callbacks itself.
func (h *pipelineEnv) silentFunction(name string) {
	h.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	h.t.Cleanup(srv.Close)
	h.do("PUT", "/api/v1/functions/"+name, map[string]any{"invoke_url": srv.URL}, 200)
}

// waitStep waits until step i of a task satisfies ok.
func (h *pipelineEnv) waitStep(taskID string, i int, ok func(st map[string]any) bool) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		steps := stepsOf(h.do("GET", "/api/v1/pipeline-tasks/"+taskID, nil, 200))
		if ok(steps[i]) {
			return steps[i]
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("step %d of task %s never reached the wanted state", i, taskID)
	return nil
}

func stepsOf(task map[string]any) []map[string]any {
	raw, _ := task["steps"].([]any)
	out := make([]map[string]any, len(raw))
	for i, s := range raw {
		out[i] = s.(map[string]any)
	}
	return out
}

func quotaOf(h *pipelineEnv, user string) map[string]any {
	return h.do("GET", "/api/v1/quotas/"+user+"/feat", nil, 200)
}

func mustContain(t *testing.T, s any, sub string) {
	t.Helper()
	if !strings.Contains(fmt.Sprint(s), sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

func refundReq(taskID, user string) pipeline.RefundRequest {
	return pipeline.RefundRequest{TaskID: taskID, UserID: user, FeatureID: "feat"}
}
