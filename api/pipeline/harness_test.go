package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	pipelineacts "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/api/httpx"
	pipelineapi "github.com/taskloom/taskloom/api/pipeline"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/fakes/vendors"
	domain "github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/worker"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

func TestMain(m *testing.M) {
	if isHelperWorker() {
		if err := runHelperWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "helper worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}

const testSecret = "pipeline-test-secret"

// harness is the pipeline subsystem running for real: Temporal dev server, FerretDB, a worker on
// a unique task queue, the HTTP API in an httptest server, and the fake vendors.
type harness struct {
	t        *testing.T
	api      *httptest.Server
	key      string
	vendors  *vendors.Server
	temporal client.Client
	queue    string
	acts     *pipelineacts.Activities
	worker   sdkworker.Worker
	store    *pipelinedb.Store
	metrics  *pipelineprom.Metrics
	cfg      *config.Config
	// temporalAddr and mongoURI let a child worker process reach the same server and database.
	temporalAddr, mongoURI string
}

func newHarness(t *testing.T, vopts vendors.Options, opts ...func(*config.Config)) *harness {
	t.Helper()
	temporalAddr, tc := testenv.Temporal(t)
	db := testenv.Mongo(t)
	cfg := config.Defaults()
	cfg.Temporal.TaskQueue = testenv.Unique("pipeline-")
	cfg.Pipeline.CallbackSecret = testSecret
	for _, o := range opts {
		o(cfg)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &platform.Platform{Config: cfg, Log: log, Mongo: db, Temporal: tc, Metrics: prometheus.NewRegistry()}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The router is mounted without api.New, so the indexes are created here, as at a start.
	if err := schema.Ensure(ctx, db); err != nil {
		t.Fatal(err)
	}
	keys := auth.NewStore(db)
	key := testenv.Unique("tl_admin_")
	if err := keys.Ensure(ctx, key, "pipeline-test", auth.PermAdmin); err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = errorHandler
	if err := pipelineapi.Mount(e, httpx.Deps{Platform: p, Authn: auth.Middleware(keys)}); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(e)
	t.Cleanup(api.Close)

	vopts.Secret = []byte(testSecret)
	vs, err := vendors.Start("127.0.0.1:0", vopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })

	acts := worker.PipelineActivities(cfg, db, log, p.Metrics)
	acts.BackendURL = api.URL
	acts.Env = map[string]string{"WATERMARK_URL": "https://fake-cos.example/brand/watermark.png"}
	h := &harness{t: t, api: api, key: key, vendors: vs, temporal: tc, queue: cfg.Temporal.TaskQueue, acts: acts, store: pipelinedb.New(db),
		metrics: pipelineprom.New(p.Metrics), cfg: cfg,
		temporalAddr: temporalAddr, mongoURI: testenv.MongoURI(t)}
	h.startWorker()
	t.Cleanup(func() {
		if h.worker != nil {
			h.worker.Stop()
		}
	})
	for _, pr := range vs.Providers() {
		h.do("PUT", "/api/v1/providers/"+pr.Ref, map[string]any{"base_url": pr.BaseURL, "health_url": pr.HealthURL}, 200)
	}
	for _, f := range vs.Functions() {
		h.do("PUT", "/api/v1/functions/"+f.Name, map[string]any{"invoke_url": f.InvokeURL}, 200)
	}
	return h
}

// errorHandler renders *httpx.Error like the real API does (status + envelope).
func errorHandler(err error, c echo.Context) {
	err = httpx.FromAuth(err)
	if he, ok := err.(*httpx.Error); ok {
		_ = c.JSON(he.Status, map[string]any{"success": false, "error": he})
		return
	}
	if he, ok := err.(*echo.HTTPError); ok {
		_ = c.JSON(he.Code, map[string]any{"success": false, "error": map[string]any{"message": fmt.Sprint(he.Message)}})
		return
	}
	_ = c.JSON(http.StatusInternalServerError, map[string]any{"success": false, "error": map[string]any{"message": err.Error()}})
}

func (h *harness) startWorker() {
	w := sdkworker.New(h.temporal, h.queue, sdkworker.Options{})
	pipelinewf.Register(w, h.acts)
	if err := w.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.worker = w
}

func (h *harness) stopWorker() {
	h.worker.Stop()
	h.worker = nil
}

// do sends a request with the admin key and checks the status; it returns the decoded body.
func (h *harness) do(method, path string, body any, want int) map[string]any {
	h.t.Helper()
	return h.doRaw(method, path, body, want, map[string]string{"X-API-Key": h.key})
}

func (h *harness) doRaw(method, path string, body any, want int, headers map[string]string) map[string]any {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, h.api.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// publish posts a schema file from testdata/pipelines (optionally edited) and returns its name.
func (h *harness) publish(file string, edit func(d map[string]any)) string {
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

// startTask grants one unit of quota and starts a task; it returns the task id.
func (h *harness) startTask(pipeline string, input map[string]any) (taskID, user string) {
	h.t.Helper()
	user = testenv.Unique("user-")
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	out := h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": pipeline, "user_id": user,
		"feature_id": "feat", "input_data": input}, 201)
	return out["task_id"].(string), user
}

// waitTask polls the task until it is success or failed.
func (h *harness) waitTask(taskID string, within time.Duration) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		out := h.do("GET", "/api/v1/pipeline-tasks/"+taskID, nil, 200)
		if s := out["status"]; s == domain.StatusSuccess || s == domain.StatusFailed {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("task %s did not finish within %s", taskID, within)
	return nil
}

// waitWorkflow waits for the workflow to close (so bookkeeping after the task row is done).
func (h *harness) waitWorkflow(taskID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.temporal.GetWorkflow(ctx, domain.WorkflowID(taskID), "").Get(ctx, nil)
}

// saveHistory records the task's workflow history when RECORD_HISTORIES is set.
func (h *harness) saveHistory(taskID, name string) {
	h.t.Helper()
	histories.Record(h.t, h.temporal, "pipeline", domain.WorkflowID(taskID), "", name)
}

func stepsOf(task map[string]any) []map[string]any {
	raw, _ := task["steps"].([]any)
	out := make([]map[string]any, len(raw))
	for i, s := range raw {
		out[i] = s.(map[string]any)
	}
	return out
}

func quotaOf(h *harness, user string) map[string]any {
	return h.do("GET", "/api/v1/quotas/"+user+"/feat", nil, 200)
}

func mustContain(t *testing.T, s any, sub string) {
	t.Helper()
	if !strings.Contains(fmt.Sprint(s), sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

func refundReq(taskID, user string) domain.RefundRequest {
	return domain.RefundRequest{TaskID: taskID, UserID: user, FeatureID: "feat"}
}

// silentFunction registers an SCF function that accepts invocations and never calls back, so a
// test can send the callbacks itself.
func (h *harness) silentFunction(name string) {
	h.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	h.t.Cleanup(srv.Close)
	h.do("PUT", "/api/v1/functions/"+name, map[string]any{"invoke_url": srv.URL}, 200)
}

// waitStep waits until step i of a task satisfies ok.
func (h *harness) waitStep(taskID string, i int, ok func(st map[string]any) bool) map[string]any {
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
