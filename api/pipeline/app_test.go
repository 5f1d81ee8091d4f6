// Package apptest runs the pipeline subsystem inside the whole application (api.New + worker.New
// through internal/testenv/e2e), proving the wiring: routes mounted, worker registration, search
// attributes, and the dev seeding of fakes and examples.
package apptest

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestCollectionVideoInTheWholeApp(t *testing.T) {
	// SCF callbacks need the API's address before the worker starts: reserve it first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	backend := "http://" + ln.Addr().String()
	t.Setenv("WATERMARK_URL", "https://cos.example/brand/wm.png")
	env := e2e.New(t, func(c *config.Config) {
		c.Pipeline.BackendURL = backend
		c.Pipeline.CallbackSecret = "apptest-secret"
	})
	srv := &http.Server{Handler: env.Echo, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	fakes, err := vendors.Start("127.0.0.1:0", vendors.Options{Secret: []byte("apptest-secret")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fakes.Close() })
	store := pipelinedb.New(env.Platform.Mongo)
	if err := vendors.Seed(env.Context(), store, fakes.URL, filepath.Join(testenv.RepoRoot(), "testdata", "pipelines")); err != nil {
		t.Fatal(err)
	}
	if err := env.Platform.Config.Validate(); err != nil {
		t.Fatal(err)
	}

	r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
		"pipeline": "collection_video_pipeline", "user_id": vendors.DevQuotaUser, "feature_id": vendors.DevQuotaFeature,
		"input_data": map[string]any{"product_images": []any{"https://cos.example/p/1.jpg"}, "background_music": "https://cos.example/m.mp3"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["task_id"].(string)
	var task map[string]any
	e2e.Eventually(t, time.Minute, "task finished", func() bool {
		task = env.Do(http.MethodGet, "/api/v1/pipeline-tasks/"+id, env.AdminKey, nil).Map(t)
		return task["status"] == pipeline.StatusSuccess || task["status"] == pipeline.StatusFailed
	})
	if task["status"] != pipeline.StatusSuccess {
		t.Fatalf("task %v", task)
	}
	query := "TaskloomKind='pipeline' AND PipelineName='collection_video_pipeline' AND TaskloomStatus='success' AND WorkflowId='" +
		pipeline.WorkflowID(id) + "'"
	e2e.Eventually(t, 30*time.Second, "workflow visible by its search attributes", func() bool {
		resp, err := env.Platform.Temporal.ListWorkflow(env.Context(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.Executions) == 1
	})
}
