package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

const (
	benchQuotaUser    = "bench-user"
	benchQuotaFeature = "bench-feature"
	// onePipeline is the 1-step sync_api example pipeline; threePipeline repeats its step.
	onePipeline   = "basic_clean_pipeline"
	threePipeline = "bench_three_step_pipeline"
	pipelineConc  = 16
)

// benchPipeline: 1-step and 3-step sync_api pipelines started over POST /api/v1/pipeline-tasks
// and awaited to completion, each against a bare workflow with as many no-op activities as the
// pipeline has steps.
func benchPipeline(ctx context.Context, r *run) []Result {
	if !r.hasRoute(ctx, "POST", "/api/v1/pipeline-tasks") {
		return []Result{{Scenario: "pipeline", Skipped: "POST /api/v1/pipeline-tasks is not mounted"}}
	}
	if err := seedPipelines(ctx, r); err != nil {
		return []Result{{Scenario: "pipeline", Skipped: "seeding failed: " + err.Error()}}
	}
	n := r.size(100, 10)
	var out []Result
	for _, pc := range []struct {
		name, pipeline string
		bare           noopWorkflow
	}{{"pipeline 1-step", onePipeline, noop1}, {"pipeline 3-step", threePipeline, noop3}} {
		base := noopBaseline(ctx, r, n, pipelineConc, pc.bare)
		res := Result{Scenario: pc.name, Unit: "pipelines", N: n}
		w := r.openWindow(ctx)
		m := r.meter(ctx)
		ids := make([]execution, n)
		tasks := make([]string, n)
		lat, elapsed, failed, err := runLoad(ctx, n, pipelineConc, func(ctx context.Context, i int) error {
			var err error
			ids[i].workflowID, tasks[i], err = runPipeline(ctx, r, pc.pipeline)
			return err
		})
		cpuPer, serverDB := w.close(ctx, n)
		if failed == 0 {
			failed, err = checkSucceeded(ctx, r, tasks)
		}
		if failed > 0 {
			res.Skipped = fmt.Sprintf("%d of %d runs failed: %v", failed, n, err)
			out = append(out, res)
			continue
		}
		res.Throughput, res.P50Ms, res.P99Ms = lat.fill(n, elapsed)
		m.charge(ctx, &res)
		base.apply(&res)
		res.Notes = fmt.Sprintf("%d concurrent clients; latency = POST to workflow completed; CPU per pipeline: %s; per bare "+
			"workflow (its worker is in the load generator): %s", pipelineConc, cpuPer, base.cpu)
		chargeTemporal(ctx, r, &res, ids)
		if res.Temporal != nil {
			res.Temporal.ServerDBPerUnit = serverDB
		}
		out = append(out, res)
	}
	return out
}

// runPipeline starts one task over HTTP and waits for its workflow; it returns the workflow's
// and the task's ids. A workflow that failed is an error.
func runPipeline(ctx context.Context, r *run, name string) (workflowID, taskID string, err error) {
	var created struct {
		TaskID     string `json:"task_id"`
		WorkflowID string `json:"workflow_id"`
	}
	body := map[string]any{"pipeline": name, "user_id": benchQuotaUser, "feature_id": benchQuotaFeature,
		"input_data": map[string]any{"input_image": "https://cos.example/bench/1.jpg"}}
	if _, err := call(ctx, "POST", r.app.apiURL+"/api/v1/pipeline-tasks", r.adminKey, body, &created); err != nil {
		return "", "", err
	}
	if err := r.p.Temporal.GetWorkflow(ctx, created.WorkflowID, "").Get(ctx, nil); err != nil {
		return created.WorkflowID, created.TaskID, fmt.Errorf("pipeline task %s: %w", created.TaskID, err)
	}
	return created.WorkflowID, created.TaskID, nil
}

// checkSucceeded reads each task's record once the timed load is over (the load generator's
// check is not the system's work) and counts those that did not end success.
func checkSucceeded(ctx context.Context, r *run, taskIDs []string) (failed int, err error) {
	store := pipelinedb.New(r.p.Mongo)
	for _, id := range taskIDs {
		task, gerr := store.GetTask(ctx, id)
		switch {
		case gerr != nil:
			failed, err = failed+1, gerr
		case task.Status != pipeline.StatusSuccess:
			failed, err = failed+1, fmt.Errorf("pipeline task %s ended %s: %s", task.ID, task.Status, task.ErrorReason)
		}
	}
	return failed, err
}

// seedPipelines registers the fake vendors, publishes the example pipelines and the 3-step
// pipeline, and grants enough quota.
func seedPipelines(ctx context.Context, r *run) error {
	store := pipelinedb.New(r.p.Mongo)
	if err := store.EnsureIndexes(ctx); err != nil {
		return err
	}
	dir := filepath.Join(r.root, "testdata", "pipelines")
	if err := vendors.Seed(ctx, store, r.stack.vendorsURL, dir); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, onePipeline+".json"))
	if err != nil {
		return err
	}
	d, err := pipeline.ParseDefinition(raw)
	if err != nil {
		return err
	}
	d.Name = threePipeline
	step := d.Schema.Steps[0]
	d.Schema.Steps = nil
	for i := range 3 {
		s := step
		s.Name = fmt.Sprintf("%s_%d", step.Name, i+1)
		d.Schema.Steps = append(d.Schema.Steps, s)
	}
	lk, err := store.Lookup(ctx)
	if err != nil {
		return err
	}
	if err := pipeline.ValidateDefinition(d, lk); err != nil {
		return fmt.Errorf("3-step pipeline: %w", err)
	}
	if _, _, err := store.PublishSchema(ctx, d); err != nil {
		return err
	}
	// The apply scenario's pipelines run as the entry subsystem's configured user.
	entry := r.stack.cfg.Entry
	for _, q := range [][2]string{{benchQuotaUser, benchQuotaFeature}, {entry.UserID, entry.FeatureID}} {
		if _, err := store.SetQuota(ctx, q[0], q[1], 10_000_000); err != nil {
			return err
		}
	}
	return nil
}
