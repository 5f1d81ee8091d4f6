package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
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
	// noisyAClients is how many of A's creations are in flight at once: A's client is bounded as
	// a real one is. 4,000 at once made Update-With-Start calls outlive the API's admission wait;
	// 200 in flight keep a few seconds of the 2-core stack's work queued on the server, each
	// answered well inside that wait, while the rest of A's backlog waits in A's client.
	noisyAClients = 200
	// noisyAttempts bounds how often one of A's creations is sent: a 503 is sent again after its
	// Retry-After under the same Idempotency-Key, so a retry answers the same task.
	noisyAttempts = 10
)

// benchNoisy is "noisy neighbour": user A submits a backlog of 1-step pipeline tasks over POST
// /api/v1/pipeline-tasks, noisyAClients at a time, at two sizes (1,000 and 4,000, × BENCH_SCALE);
// behind each, while most of it is still to come, user B submits noisyRounds rounds of noisyB.
// B's time to start is POST sent to its first step's started_at. Fairness holds when B's wait
// does not grow with A's backlog: the ratio is B's p95 behind the large backlog ÷ behind the
// small one (target ≤ 1.25). B alone on the idle stack is context: on a 2-core stack a fair
// share still halves B's CPU.
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
	m := r.meter(ctx)
	var behind []*behindBacklog
	for _, n := range []int{r.size(1000, 100), r.size(4000, 400)} {
		b, err := quietBehind(ctx, r, n)
		if err != nil {
			logf("noisy: %v", err)
			res.Skipped = fmt.Sprintf("behind A's %d: %v", n, err)
			return []Result{res}
		}
		behind = append(behind, b)
		res.N += b.n + noisyB*noisyRounds
	}
	m.charge(ctx, &res)
	small, large := behind[0], behind[1]
	noisyFigures(&res, small, large, alone)
	chargeTemporal(ctx, r, &res, pipelineRuns(large.ids))
	return []Result{res}
}

// noisyFigures fills the row: latency behind the large backlog, the small one as the baseline,
// the ratio of their p95s, and B alone in the notes.
func noisyFigures(res *Result, small, large *behindBacklog, alone latencies) {
	p95Small, p95Large, p95Alone := small.lat.percentile(0.95), large.lat.percentile(0.95), alone.percentile(0.95)
	res.Throughput = float64(large.n+noisyB*noisyRounds) / large.drained.Seconds()
	res.P50Ms, res.P99Ms = large.lat.percentile(0.50), large.lat.percentile(0.99)
	res.Baseline = fmt.Sprintf("B's %d x %d behind A's %d", noisyRounds, noisyB, small.n)
	res.BaselineP50Ms, res.BaselineP99Ms = small.lat.percentile(0.50), small.lat.percentile(0.99)
	if p95Small > 0 {
		res.Ratio, res.RatioOf = p95Large/p95Small, fmt.Sprintf("p95 time to start behind %d vs %d", large.n, small.n)
	}
	res.Notes = fmt.Sprintf("B's p95 time to start %.1f ms behind A's %d, %.1f ms behind A's %d, %.1f ms alone "+
		"(%d rounds of %d at once each); A sent %d at a time and retried its 503s after Retry-After (%d and %d retries); "+
		"A's tasks not yet answered as B's rounds were sent: %v of %d, %v of %d; latency = POST sent to first step "+
		"started (p50/p99 behind %d, baseline behind %d); throughput = A+B drained behind %d",
		p95Large, large.n, p95Small, small.n, p95Alone, noisyRounds, noisyB, noisyAClients, small.retried, large.retried,
		small.pending, small.n, large.pending, large.n, large.n, small.n, large.n)
}

// behindBacklog is B's rounds behind one of A's backlogs.
type behindBacklog struct {
	n       int // A's tasks
	lat     latencies
	pending []int // A's tasks not yet answered as each of B's rounds was sent
	drained time.Duration
	retried int64 // A's 503s, each sent again after its Retry-After
	ids     []string
}

// quietBehind starts A's backlog of n and sends B's rounds once A's first noisyAClients
// creations have been answered (the server then holds its share of A's work in a steady state;
// the rest waits in A's client), then waits until A's backlog has drained.
func quietBehind(ctx context.Context, r *run, n int) (*behindBacklog, error) {
	t0 := time.Now()
	burst := startBacklog(ctx, r, n)
	for burst.answered.Load() < int64(min(noisyAClients, n)) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	lat, pending, errB := quietUserRounds(ctx, r, func() int { return n - int(burst.answered.Load()) })
	logf("noisy: B behind A's %d: p95 time to start %.1f ms (A's tasks not yet answered as B's rounds were sent: %v; %s after A started)",
		n, lat.percentile(0.95), pending, time.Since(t0).Round(time.Millisecond))
	errA := burst.wait(ctx)
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	return &behindBacklog{n: n, lat: lat, pending: pending, drained: time.Since(t0), retried: burst.retried.Load(), ids: burst.ids}, nil
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
	_, err := callWith(ctx, burstClient, "POST", r.app.apiURL+"/api/v1/pipeline-tasks", r.adminKey, noisyBody(user), &created)
	return created.TaskID, err
}

func noisyBody(user string) map[string]any {
	return map[string]any{"pipeline": noisyPipeline, "user_id": user, "feature_id": benchQuotaFeature,
		"input_data": map[string]any{"input_image": "https://cos.example/bench/1.jpg"}}
}

// submitRetrying creates one task for user under an Idempotency-Key, as a careful client does: a
// 503 is sent again, with the same key, after its Retry-After, up to noisyAttempts times. It
// returns the task id and how many 503s it met.
func submitRetrying(ctx context.Context, r *run, user, key string) (string, int64, error) {
	raw, err := json.Marshal(noisyBody(user))
	if err != nil {
		return "", 0, err
	}
	var retried int64
	for attempt := 1; ; attempt++ {
		id, wait, err := postOnce(ctx, r, key, raw)
		if wait == 0 || attempt == noisyAttempts {
			return id, retried, err
		}
		retried++
		select {
		case <-ctx.Done():
			return "", retried, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// postOnce sends one creation; wait is the Retry-After of a 503 (0 for any other answer).
func postOnce(ctx context.Context, r *run, key string, body []byte) (id string, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, "POST", r.app.apiURL+"/api/v1/pipeline-tasks", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", r.adminKey)
	req.Header.Set("Idempotency-Key", key)
	resp, err := burstClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable {
		secs, perr := strconv.Atoi(resp.Header.Get("Retry-After"))
		if perr != nil || secs < 1 {
			secs = 1
		}
		return "", time.Duration(secs) * time.Second, fmt.Errorf("503 %s", trim(data))
	}
	if resp.StatusCode/100 != 2 {
		return "", 0, fmt.Errorf("POST /api/v1/pipeline-tasks: %d %s", resp.StatusCode, trim(data))
	}
	var created struct {
		TaskID string `json:"task_id"`
	}
	if err := json.Unmarshal(data, &created); err != nil {
		return "", 0, fmt.Errorf("decode creation: %w", err)
	}
	return created.TaskID, 0, nil
}

// pipelineRuns is the workflow of each pipeline task.
func pipelineRuns(taskIDs []string) []execution {
	out := make([]execution, len(taskIDs))
	for i, id := range taskIDs {
		out[i] = execution{workflowID: pipeline.WorkflowID(id)}
	}
	return out
}

// burstClient has no overall timeout: the API bounds its own wait for an admission.
var burstClient = newHTTPClient(0)

// burst is user A's backlog: its requests in flight and those still to send.
type burst struct {
	r        *run
	wg       sync.WaitGroup
	answered atomic.Int64
	retried  atomic.Int64
	mu       sync.Mutex
	ids      []string
	failed   int
	firstErr error
}

// startBacklog sends n of A's requests, noisyAClients at a time, each under its own
// Idempotency-Key.
func startBacklog(ctx context.Context, r *run, n int) *burst {
	b := &burst{r: r}
	run := suffix()
	var next atomic.Int64
	for range min(noisyAClients, n) {
		b.wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				id, retried, err := submitRetrying(ctx, r, noisyUserA, fmt.Sprintf("noisy-%s-%d", run, i))
				b.record(id, retried, err)
			}
		})
	}
	return b
}

// record counts one of A's requests answered.
func (b *burst) record(id string, retried int64, err error) {
	b.answered.Add(1)
	b.retried.Add(retried)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.failed++
		b.firstErr = cmp.Or(b.firstErr, err)
		return
	}
	b.ids = append(b.ids, id)
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
