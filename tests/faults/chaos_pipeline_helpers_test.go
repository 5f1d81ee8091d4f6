//go:build chaos

package faults_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// pipelineFaultEnv is the whole application against its own fake vendors, with the example
// pipelines published; mut adjusts the configuration further.
func pipelineFaultEnv(t *testing.T, opts vendors.Options, mut ...func(*config.Config)) (*e2e.Env, *vendors.Server, *pipelinedb.Store) {
	t.Helper()
	return pipelineFaultEnvFrom(t, e2e.New, opts, mut...)
}

// pipelineFaultEnvFrom is pipelineFaultEnv with the application started by newEnv (e2e.New or
// e2e.NewWithoutWorker).
func pipelineFaultEnvFrom(t *testing.T, newEnv func(testing.TB, ...e2e.Option) *e2e.Env, opts vendors.Options,
	mut ...func(*config.Config)) (*e2e.Env, *vendors.Server, *pipelinedb.Store) {
	t.Helper()
	opts.Secret = []byte(callbackSecret)
	vend, err := vendors.Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vend.Close() })
	env := newEnv(t, func(c *config.Config) {
		c.Pipeline.FakeVendorsURL = vend.URL
		c.Pipeline.CallbackSecret = callbackSecret
		for _, m := range mut {
			m(c)
		}
	})
	store := pipelinedb.New(env.Platform.Mongo)
	if err := vendors.Seed(env.Context(), store, vend.URL, filepath.Join(testenv.RepoRoot(), "testdata", "pipelines")); err != nil {
		t.Fatal(err)
	}
	return env, vend, store
}

// awaitPipelinesSucceeded waits up to 3 minutes for every task's workflow and fails the test for
// each task that did not end in success.
func awaitPipelinesSucceeded(t *testing.T, env *e2e.Env, store *pipelinedb.Store, tasks []string) {
	t.Helper()
	ctx := env.Context()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, id := range tasks {
		if err := env.Platform.Temporal.GetWorkflow(wctx, pipeline.WorkflowID(id), "").Get(wctx, nil); err != nil {
			t.Fatalf("pipeline %s: %v", id, err)
		}
		task, err := store.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != pipeline.StatusSuccess {
			t.Errorf("pipeline %s ended %s: %s", id, task.Status, task.ErrorReason)
		}
	}
}

// quotaLeft is the remaining quota of user/feature.
func quotaLeft(t *testing.T, env *e2e.Env, store *pipelinedb.Store, user, feature string) int {
	t.Helper()
	q, err := store.GetQuota(env.Context(), user, feature)
	if err != nil {
		t.Fatal(err)
	}
	return q.Remaining
}

// postPipelineRuns posts n runs of pipeline for user/feature over HTTP, input(i) being run i's
// input_data, and returns their task ids; every post must be accepted.
func postPipelineRuns(t *testing.T, env *e2e.Env, n int, name, user, feature string, input func(i int) map[string]any) []string {
	t.Helper()
	tasks := make([]string, 0, n)
	for i := range n {
		r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
			"pipeline": name, "user_id": user, "feature_id": feature, "input_data": input(i)})
		if r.Status != http.StatusCreated {
			t.Fatalf("run %d: %d %s", i, r.Status, r.Body)
		}
		var created struct {
			TaskID string `json:"task_id"`
		}
		r.JSON(t, &created)
		tasks = append(tasks, created.TaskID)
	}
	return tasks
}
