package pipeline_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// The wiring of the whole application as `make dev` runs it: the dev seeding of the fakes and the
// examples (vendors.Seed), the routes, the worker's registration, the SCF callback reaching the
// API at its public URL, and the search attributes that find the run.
func TestDevSeededCollectionVideoInTheWholeApp(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	store := pipelinedb.New(h.Platform.Mongo)
	if err := vendors.Seed(h.Context(), store, h.vendors.URL, filepath.Join(testenv.RepoRoot(), "testdata", "pipelines")); err != nil {
		t.Fatal(err)
	}
	if err := h.Config.Validate(); err != nil {
		t.Fatal(err)
	}
	r := h.Do(http.MethodPost, "/api/v1/pipeline-tasks", h.AdminKey, map[string]any{
		"pipeline": "collection_video_pipeline", "user_id": pipelinedemo.DevQuotaUser, "feature_id": pipelinedemo.DevQuotaFeature,
		"input_data": map[string]any{"product_images": []any{"https://cos.example/p/1.jpg"}, "background_music": "https://cos.example/m.mp3"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["task_id"].(string)
	if task := h.waitTask(id, time.Minute); task["status"] != pipeline.StatusSuccess {
		t.Fatalf("task %v", task)
	}
	query := "TaskloomKind='pipeline' AND PipelineName='collection_video_pipeline' AND TaskloomStatus='success' AND WorkflowId='" +
		pipeline.WorkflowID(id) + "'"
	e2e.Eventually(t, 30*time.Second, "workflow visible by its search attributes", func() bool {
		resp, err := h.Platform.Temporal.ListWorkflow(h.Context(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.Executions) == 1
	})
}
