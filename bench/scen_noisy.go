package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

const (
	// noisyPipeline is the 1-step pipeline without its 60 s max_execution_time: A's last tasks
	// wait longer than that for their turn, which is the point, not a failure.
	noisyPipeline = "bench_noisy_pipeline"
	noisyUserA    = "bench-noisy-a"
	noisyUserB    = "bench-noisy-b"
	// noisyB is how many tasks the quiet user submits at once, alone and behind the backlog, in
	// each of noisyRounds rounds. The p95 of 10 was the slowest task of one round, which one
	// scheduling hiccup decided; that of 30 the second slowest, still moving ~2× between runs
	// alone; that of 50 the third. Five rounds still all run behind A's backlog (the row's notes
	// say how much of it was left as each round was sent).
	noisyB      = 10
	noisyRounds = 5
)

// benchNoisy is "noisy neighbour": user A fires 1,000 1-step pipeline tasks at once over
// POST /api/v1/pipeline-tasks, then user B submits 10; B's time to start (POST sent to its
// first step's started_at) is compared with B's 10 on the idle stack. Fairness holds when the
// ratio of the p95s stays small: B's tasks do not wait behind A's backlog.
func benchNoisy(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "noisy neighbour", Unit: "pipelines"}
	if !r.hasRoute(ctx, "POST", "/api/v1/pipeline-tasks") {
		res.Skipped = "POST /api/v1/pipeline-tasks is not mounted"
		return []Result{res}
	}
	if err := seedNoisy(ctx, r); err != nil {
		res.Skipped = "seeding failed: " + err.Error()
		return []Result{res}
	}
	alone, _, err := quietUserRounds(ctx, r, nil)
	if err != nil {
		res.Skipped = "B alone: " + err.Error()
		return []Result{res}
	}
	logf("noisy: B alone p95 time to start %.1f ms", alone.percentile(0.95))
	nA := r.size(1000, 100)
	m := r.meter(ctx)
	t0 := time.Now()
	burst := startBurst(ctx, r, nA)
	if err := awaitStarted(ctx, r, t0, nA); err != nil {
		logf("noisy: %v", err)
		res.Skipped = errors.Join(err, burst.wait(ctx)).Error()
		return []Result{res}
	}
	loaded, pendingA, errB := quietUserRounds(ctx, r, func() int { return nA - int(burst.answered.Load()) })
	logf("noisy: B behind A's backlog p95 time to start %.1f ms (of A's %d, %v not yet admitted as B's rounds were sent; %s after A's burst)",
		loaded.percentile(0.95), nA, pendingA, time.Since(t0).Round(time.Millisecond))
	errA := burst.wait(ctx)
	drained := time.Since(t0)
	if err := errors.Join(errA, errB); err != nil {
		logf("noisy: %v", err)
		res.Skipped = "with A's backlog: " + err.Error()
		return []Result{res}
	}
	res.N = nA + noisyB*noisyRounds
	res.Throughput = float64(res.N) / drained.Seconds()
	res.P50Ms, res.P99Ms = loaded.percentile(0.50), loaded.percentile(0.99)
	m.charge(ctx, &res)
	res.Baseline = fmt.Sprintf("B's %d x %d alone", noisyRounds, noisyB)
	res.BaselineP50Ms, res.BaselineP99Ms = alone.percentile(0.50), alone.percentile(0.99)
	p95, p95Alone := loaded.percentile(0.95), alone.percentile(0.95)
	if p95Alone > 0 {
		res.Ratio, res.RatioOf = p95/p95Alone, "p95 time to start"
	}
	res.Notes = fmt.Sprintf("B's p95 time to start %.1f ms with A's backlog, %.1f ms alone (%d rounds of %d at once each); A fired %d tasks at once, "+
		"all started and %v not yet admitted as B's rounds were sent; latency = POST sent to first step started; throughput = A+B drained",
		p95, p95Alone, noisyRounds, noisyB, nA, pendingA)
	chargeTemporal(ctx, r, &res, pipelineRuns(burst.ids))
	return []Result{res}
}

// awaitStarted waits until the server has recorded the start of all n of A's tasks: B then
// arrives behind a queued backlog, not in the same instant as A's requests, whose starts the
// server records first come, first served.
func awaitStarted(ctx context.Context, r *run, since time.Time, n int) error {
	q := fmt.Sprintf("TaskloomKind = '%s' AND StartTime >= '%s'", pipelinewf.Kind, since.UTC().Format(time.RFC3339Nano))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		// A count that fails under the burst's load is asked again; only the deadline ends it.
		resp, err := r.p.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
		if err == nil && resp.GetCount() >= int64(n) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("user A's %d tasks not all started within 5 minutes (count %d, err %v)", n, resp.GetCount(), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// seedNoisy publishes the pipelines and noisyPipeline, and grants both users enough quota.
func seedNoisy(ctx context.Context, r *run) error {
	if err := seedPipelines(ctx, r); err != nil {
		return err
	}
	store := pipelinedb.New(r.p.Mongo)
	rec, err := store.GetSchema(ctx, onePipeline, "")
	if err != nil {
		return err
	}
	d := &pipeline.Definition{Name: noisyPipeline, Version: rec.Version, Schema: rec.Schema}
	d.Schema.MaxExecutionTime = 0
	if _, _, err := store.PublishSchema(ctx, d); err != nil {
		return err
	}
	for _, u := range []string{noisyUserA, noisyUserB} {
		if _, err := store.SetQuota(ctx, u, benchQuotaFeature, 10_000_000); err != nil {
			return err
		}
	}
	return nil
}

// quietUserRounds runs noisyRounds rounds of quietUserStarts, one after the other, and returns
// all their times to start; backlog, when given, is read as each round is sent (A's tasks not yet
// admitted).
func quietUserRounds(ctx context.Context, r *run, backlog func() int) (latencies, []int, error) {
	var all latencies
	var pending []int
	for range noisyRounds {
		if backlog != nil {
			pending = append(pending, backlog())
		}
		lat, err := quietUserStarts(ctx, r)
		if err != nil {
			return nil, pending, err
		}
		all = append(all, lat...)
	}
	return all, pending, nil
}

// quietUserStarts submits B's tasks at once, waits for them to finish, and returns each one's
// time to start: from its POST being sent to its first step's started_at.
func quietUserStarts(ctx context.Context, r *run) (latencies, error) {
	sent := make([]time.Time, noisyB)
	ids := make([]string, noisyB)
	_, _, failed, err := runLoad(ctx, noisyB, noisyB, func(ctx context.Context, i int) error {
		sent[i] = time.Now()
		id, err := submitPipeline(ctx, r, noisyUserB)
		ids[i] = id
		return err
	})
	if failed > 0 {
		return nil, fmt.Errorf("%d of %d submissions failed: %w", failed, noisyB, err)
	}
	store := pipelinedb.New(r.p.Mongo)
	lat := make(latencies, noisyB)
	for i, id := range ids {
		if err := r.p.Temporal.GetWorkflow(ctx, pipeline.WorkflowID(id), "").Get(ctx, nil); err != nil {
			return nil, fmt.Errorf("pipeline task %s: %w", id, err)
		}
		step, err := store.GetStep(ctx, id, 0)
		if err != nil {
			return nil, err
		}
		if step.StartedAt == nil {
			return nil, fmt.Errorf("pipeline task %s: first step has no started_at", id)
		}
		lat[i] = step.StartedAt.Sub(sent[i])
	}
	return lat, nil
}

// submitPipeline creates one 1-step task for user over HTTP and returns its id once admitted.
func submitPipeline(ctx context.Context, r *run, user string) (string, error) {
	var created struct {
		TaskID string `json:"task_id"`
	}
	body := map[string]any{"pipeline": noisyPipeline, "user_id": user, "feature_id": benchQuotaFeature,
		"input_data": map[string]any{"input_image": "https://cos.example/bench/1.jpg"}}
	_, err := callWith(ctx, burstClient, "POST", r.app.apiURL+"/api/v1/pipeline-tasks", r.adminKey, body, &created)
	return created.TaskID, err
}

// pipelineRuns is the workflow of each pipeline task.
func pipelineRuns(taskIDs []string) []execution {
	out := make([]execution, len(taskIDs))
	for i, id := range taskIDs {
		out[i] = execution{workflowID: pipeline.WorkflowID(id)}
	}
	return out
}

// burstClient has no overall timeout: the last of A's requests is answered only once the
// backlog ahead of it has been admitted.
var burstClient = newHTTPClient(0)

// burst is user A's requests in flight.
type burst struct {
	r        *run
	wg       sync.WaitGroup
	answered atomic.Int64
	mu       sync.Mutex
	ids      []string
	failed   int
	firstErr error
}

// startBurst sends n of A's requests at once.
func startBurst(ctx context.Context, r *run, n int) *burst {
	b := &burst{r: r}
	for range n {
		b.wg.Go(func() {
			id, err := submitPipeline(ctx, r, noisyUserA)
			b.answered.Add(1)
			b.mu.Lock()
			defer b.mu.Unlock()
			if err != nil {
				b.failed++
				b.firstErr = cmp.Or(b.firstErr, err)
				return
			}
			b.ids = append(b.ids, id)
		})
	}
	return b
}

// wait waits for every request, then for every admitted task's workflow to finish, so the
// next scenario starts on an idle stack.
func (b *burst) wait(ctx context.Context) error {
	b.wg.Wait()
	if b.failed > 0 {
		return fmt.Errorf("%d of A's requests failed: %w", b.failed, b.firstErr)
	}
	_, _, failed, err := runLoad(ctx, len(b.ids), 32, func(ctx context.Context, i int) error {
		return b.r.p.Temporal.GetWorkflow(ctx, pipeline.WorkflowID(b.ids[i]), "").Get(ctx, nil)
	})
	if failed > 0 {
		return fmt.Errorf("%d of A's tasks failed: %w", failed, err)
	}
	return nil
}
