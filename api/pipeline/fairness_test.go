package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// quietTasks is how many tasks the quiet user B submits behind A's backlog.
const quietTasks = 4

// B's tasks do not wait behind A's backlog, however long it is: with A's 30 and then 120 tasks
// queued on the server (the worker stopped, so the whole backlog is there) before B's 4, the
// number of A's tasks whose first step starts before B's last one stays the same, where a
// first-come-first-served queue would start all 30, then all 120, first
// (docs/pipelines.md "Fair under load").
func TestQuietUserDoesNotWaitBehindABacklog(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{}, func(c *config.Config) { c.Worker.MaxConcurrentWorkflowTasks = 2 })
	name := h.publish("basic_clean_pipeline.json", nil)
	small, large := h.aheadOfQuietUser(name, 30), h.aheadOfQuietUser(name, 120)
	t.Logf("A's tasks started before B's last: %d behind 30, %d behind 120", small, large)
	if large > 30 || large > small+2*quietTasks {
		t.Fatalf("B's wait grows with A's backlog: %d of A's tasks went first behind 30, %d behind 120", small, large)
	}
}

// aheadOfQuietUser queues backlog tasks of a user A, then quietTasks of a user B, starts the
// worker, and counts A's tasks whose first step started before B's last one did.
func (h *pipelineEnv) aheadOfQuietUser(name string, backlog int) int {
	h.t.Helper()
	h.StopWorker()
	a, b := testenv.Unique("noisy-"), testenv.Unique("quiet-")
	ctx, cancel := context.WithTimeout(h.Context(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	ids := map[string][]string{}
	var mu sync.Mutex
	errs := make(chan error, backlog+quietTasks)
	submit := func(user string, n int) {
		h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": n}, 200)
		for range n {
			wg.Go(func() {
				adm, err := h.workflows.Start(ctx, pipelinewf.StartRequest{TaskRequest: pipeline.TaskRequest{Pipeline: name,
					UserID: user, FeatureID: "feat", InputData: map[string]any{"input_image": "https://cos.example/f.jpg"}}})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[user] = append(ids[user], adm.TaskID)
			})
		}
	}
	submit(a, backlog)
	h.awaitRunning(ctx, backlog)
	submit(b, quietTasks)
	h.awaitRunning(ctx, backlog+quietTasks)
	h.StartWorker()
	wg.Wait()
	close(errs)
	for err := range errs {
		h.t.Fatal(err)
	}
	for _, id := range slices.Concat(ids[a], ids[b]) {
		if err := h.waitWorkflow(id); err != nil {
			h.t.Fatalf("task %s: %v", id, err)
		}
	}
	lastB := slices.MaxFunc(h.firstStepStarts(ids[b]), time.Time.Compare)
	ahead := 0
	for _, s := range h.firstStepStarts(ids[a]) {
		if s.Before(lastB) {
			ahead++
		}
	}
	return ahead
}

// awaitRunning waits until the server has recorded n running workflows on the env's queue (the
// worker is stopped, so all of them wait there).
func (h *pipelineEnv) awaitRunning(ctx context.Context, n int) {
	h.t.Helper()
	q := fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus = 'Running'", h.Config.Temporal.TaskQueue)
	for {
		resp, err := h.Platform.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
		if err == nil && resp.GetCount() >= int64(n) {
			return
		}
		if ctx.Err() != nil {
			h.t.Fatalf("%d workflows not all started: count %d, %v", n, resp.GetCount(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// firstStepStarts are the tasks' first steps' started_at.
func (h *pipelineEnv) firstStepStarts(ids []string) []time.Time {
	h.t.Helper()
	store := pipelinedb.New(h.Platform.Mongo)
	out := make([]time.Time, 0, len(ids))
	for _, id := range ids {
		st, err := store.GetStep(h.Context(), id, 0)
		if err != nil || st.StartedAt == nil {
			h.t.Fatalf("task %s: first step %v, %v", id, st, err)
		}
		out = append(out, *st.StartedAt)
	}
	return out
}
