package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

const (
	queueOpScenario = "queue op"
	// queueOpQueue is the queue seedClientTasks fills.
	queueOpQueue = "burst.json"
	// queueOpMaxTasks keeps the queue to the size the console resets in one click.
	queueOpMaxTasks = 500
)

// benchQueueOp: the console's "reset queue" (POST /api/v1/projects/{id}/queues/{queue}/reset)
// on one queue of 200 tasks (x BENCH_SCALE, at most 500), one operation after the other as an
// operator would click, each run by a QueueOperationWorkflow and awaited to completion; against
// the bare workflow with one no-op activity, one after the other, which is the operation's
// Temporal floor (a start and one batch). Commands are per operation and, in the notes, per task
// changed.
func benchQueueOp(ctx context.Context, r *run) []Result {
	res := Result{Scenario: queueOpScenario, Unit: "operations"}
	tasks := min(r.size(200, 50), queueOpMaxTasks)
	ops := r.size(10, 3)
	res.N = ops
	project := "bench-queueop-" + suffix()
	if err := seedClientTasks(ctx, r.echo, project, tasks); err != nil {
		res.Skipped = "seeding failed: " + err.Error()
		return []Result{res}
	}
	path := fmt.Sprintf("%s/api/v1/projects/%s/queues/%s/reset", r.app.apiURL, project, queueOpQueue)
	runs := make([]execution, ops)
	var changed atomic.Int64
	m := r.meter(ctx)
	lat, elapsed, failed, err := runLoad(ctx, ops, 1, func(ctx context.Context, i int) error {
		n, run, err := resetQueue(ctx, r, path)
		runs[i] = run
		changed.Add(int64(n))
		return err
	})
	if failed > 0 {
		res.Skipped = fmt.Sprintf("%d of %d operations failed: %v", failed, ops, err)
		return []Result{res}
	}
	res.Throughput, res.P50Ms, res.P99Ms = lat.fill(ops, elapsed)
	m.charge(ctx, &res)
	noopBaseline(ctx, r, ops, 1, noop1).apply(&res)
	res.Notes = fmt.Sprintf("reset of one queue of %d tasks, %d operations one after the other; latency = POST to workflow completed",
		tasks, ops)
	if c := changed.Load(); res.Costed && c > 0 {
		res.Notes += fmt.Sprintf("; %.3f mongo commands per task changed (%d tasks changed in all)",
			res.MongoPerUnit*float64(ops)/float64(c), c)
	}
	chargeTemporal(ctx, r, &res, runs)
	return []Result{res}
}

// resetQueue sends one reset and waits for its workflow; it returns the tasks changed and the run.
func resetQueue(ctx context.Context, r *run, url string) (int, execution, error) {
	var out struct {
		Data struct {
			OpID    string `json:"op_id"`
			State   string `json:"state"`
			Changed int    `json:"reset_tasks_count"`
		} `json:"data"`
	}
	if _, err := call(ctx, "POST", url, r.adminKey, map[string]any{}, &out); err != nil {
		return 0, execution{}, err
	}
	id, runID, _ := strings.Cut(out.Data.OpID, "/")
	run := execution{workflowID: id, runID: runID}
	if out.Data.State == "completed" {
		return out.Data.Changed, run, nil
	}
	// Answered 202 (still running after ECHO_QUEUE_OP_WAIT): wait for the workflow itself.
	var done taskechowf.QueueOpResult
	if err := r.p.Temporal.GetWorkflow(ctx, id, runID).Get(ctx, &done); err != nil {
		return 0, run, fmt.Errorf("queue operation %s: %w", out.Data.OpID, err)
	}
	return done.Changed, run, nil
}
