package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

const (
	pullClients = 8
	pullLimit   = 50
	seedConc    = 8
)

// benchPull: tasks claimed per second through GET …/tasks/pull?limit=50 with 8 concurrent
// clients (one read key each) against the naive loop the seed describes — each client claims
// one task per findOneAndUpdate — on the same database with the same data: both projects are
// seeded with the same N server tasks through the echo service's CreateTask before either run.
// Both runs drain their project and must hand out every task exactly once.
func benchPull(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "pull", Unit: "tasks"}
	if !r.hasRoute(ctx, "GET", "/api/v1/projects/bench/tasks/pull") {
		res.Skipped = "the echo API (GET /api/v1/projects/{projectId}/tasks/pull) is not mounted"
		return []Result{res}
	}
	// 500 by default: on FerretDB (SQLite) under 8 concurrent pullers a pull call takes
	// seconds, and the whole run must stay under 10 minutes; BENCH_SCALE=10 gives 5,000.
	n := r.size(500, 100)
	res.N = n
	svc := r.echo
	apiProject, naiveProject := "bench-pull-"+suffix(), "bench-naive-"+suffix()
	t0 := time.Now()
	for _, pid := range []string{apiProject, naiveProject} {
		if err := seedServerTasks(ctx, svc, pid, n); err != nil {
			res.Skipped = "seeding failed: " + err.Error()
			return []Result{res}
		}
	}
	logf("pull: seeded 2 x %d server tasks in %s", n, time.Since(t0).Round(time.Millisecond))

	keys := make([]string, pullClients)
	for i := range keys {
		_, k, err := auth.NewStore(r.p.Mongo).Create(ctx, auth.NewKey{Name: fmt.Sprintf("bench-puller-%d", i), Permission: auth.PermRead})
		if err != nil {
			res.Skipped = "create puller key: " + err.Error()
			return []Result{res}
		}
		keys[i] = k
	}
	tasks := r.p.Mongo.Collection(taskechodb.CollTasks)
	m := r.meter(ctx)
	api, err := drain(ctx, apiBudget, unpulled(tasks, apiProject), func(ctx context.Context, client int) ([]string, error) {
		return apiPull(ctx, r, keys[client], apiProject)
	})
	if err == nil {
		err = api.check(ctx, tasks, apiProject, n)
	}
	if err != nil {
		res.Skipped = "API pull: " + err.Error()
		return []Result{res}
	}
	res.Throughput, res.P50Ms, res.P99Ms = api.lat.fill(api.delivered, api.claiming)
	m.charge(ctx, &res)
	chargeCalls(&res, api.calls)

	naive, err := drain(ctx, naiveBudget, unpulled(tasks, naiveProject), func(ctx context.Context, client int) ([]string, error) {
		return naivePull(ctx, tasks, naiveProject, fmt.Sprintf("naive-%d", client))
	})
	if err == nil {
		err = naive.check(ctx, tasks, naiveProject, n)
	}
	b := baseline{name: "seed: findOneAndUpdate per task, 8 clients"}
	if err != nil {
		b.err = err
	} else {
		b.tput, b.p50, b.p9 = naive.lat.fill(naive.delivered, naive.claiming)
	}
	b.apply(&res)
	res.Notes = fmt.Sprintf("%d server tasks, %d clients, limit=%d; latency = one pull call (baseline: one findOneAndUpdate); API: %s; baseline: %s; 0 tasks handed out twice in either run",
		n, pullClients, pullLimit, api.describe(n), naive.describe(n))
	if api.retried > 0 {
		res.Notes += fmt.Sprintf("; %d API calls answered 503 (store timeout under load) and were retried: the %d tasks they had leased stay leased until pull_timeout and are not counted as delivered",
			api.retried, n-api.delivered)
	}
	return []Result{res}
}

// seedServerTasks creates the project (one client push, as a TaskEcho client would) and n
// pullable server tasks in it, through the service's CreateTask on seedConc goroutines.
func seedServerTasks(ctx context.Context, svc *taskecho.Server, projectID string, n int) error {
	body := fmt.Sprintf(`{"project_id":%q,"project_name":"bench","queue_id":"bench.json","queue_name":"bench.json",`+
		`"tasks":[{"id":"client-1","name":"client task","prompt":"not pullable","status":"done"}]}`, projectID)
	in, err := taskecho.ParseSubmit([]byte(body), time.Now())
	if err != nil {
		return err
	}
	actor := taskecho.Actor{Name: "bench-seed"}
	if _, err := svc.Intake.Submit(ctx, actor, in, taskecho.ConflictOverwrite); err != nil {
		return fmt.Errorf("create project %s: %w", projectID, err)
	}
	_, _, failed, err := runLoad(ctx, n, seedConc, func(ctx context.Context, i int) error {
		f, err := taskecho.ParseTaskCreate(fmt.Appendf(nil, `{"taskId":"t-%06d","name":"bench task %d","prompt":"do task %d"}`, i, i, i))
		if err != nil {
			return err
		}
		_, err = svc.Admin.CreateTask(ctx, actor, projectID, nil, f)
		return err
	})
	if failed > 0 {
		return fmt.Errorf("%d of %d tasks: %w", failed, n, err)
	}
	return nil
}

// drained is one run of clients over a project.
type drained struct {
	lat latencies
	// elapsed is the whole run; claiming ends when the last task was handed out. Throughput is
	// over claiming: after it, each client only learns that nothing is left (an empty call and a
	// count of the unpulled tasks, the harness's own query), and a run stopped by its budget has
	// no such tail, so counting it would charge the drained run for a stop the other never makes.
	elapsed, claiming time.Duration
	calls             int
	// delivered counts distinct tasks handed to a client; dups the tasks handed out again.
	delivered, dups int
	// capped says the run was stopped by its time budget before the project was drained.
	capped bool
	// retried counts 503 answers (the store timed out under the load) that the client retried
	// after a second, as a TaskEcho client would.
	retried int
}

// errRetry is a 503 with Retry-After: the client waits and pulls again.
var errRetry = errors.New("503, retry")

// naiveBudget bounds the baseline: on FerretDB the per-task loop claims a few tasks per second,
// so it is measured for this long (or until drained) rather than to the end.
const naiveBudget = 60 * time.Second

// apiBudget bounds the API run the same way (at the default size it drains well within it).
const apiBudget = 4 * time.Minute

// maxRetries bounds the 503s one run tolerates before it is reported as failed.
const maxRetries = 50

// drain runs pullClients clients, each calling pull until it gets nothing and remaining says
// no unpulled task is left, and counts what they were handed.
func drain(ctx context.Context, budget time.Duration, remaining func(context.Context) (int64, error), pull func(ctx context.Context, client int) ([]string, error)) (drained, error) {
	var (
		mu       sync.Mutex
		out      drained
		seen     = map[string]int{}
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	stopProgress := make(chan struct{})
	go func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-tick.C:
				mu.Lock()
				logf("pull: %d tasks handed out in %d calls after %s", len(seen), out.calls, time.Since(start).Round(time.Second))
				mu.Unlock()
			}
		}
	}()
	for c := range pullClients {
		wg.Go(func() {
			// The budget is checked between calls, so a call in flight finishes and counts.
			for ctx.Err() == nil {
				if time.Since(start) > budget {
					mu.Lock()
					out.capped = true
					mu.Unlock()
					return
				}
				t := time.Now()
				ids, err := pull(ctx, c)
				d := time.Since(t)
				mu.Lock()
				if errors.Is(err, errRetry) && out.retried < maxRetries {
					out.retried++
					mu.Unlock()
					time.Sleep(time.Second)
					continue
				}
				if err != nil {
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					return
				}
				out.calls++
				if len(ids) > 0 {
					out.lat = append(out.lat, d)
					out.claiming = max(out.claiming, time.Since(start))
				}
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
				if len(ids) > 0 {
					continue
				}
				// A pull that lost every claim to the other clients can answer empty although
				// tasks remain: stop only when the database has no unpulled task left.
				left, err := remaining(ctx)
				if err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					return
				}
				if left == 0 {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(stopProgress)
	out.elapsed = time.Since(start)
	if out.claiming == 0 { // nothing handed out: the rate is 0 over the whole run
		out.claiming = out.elapsed
	}
	out.delivered = len(seen)
	for _, c := range seen {
		out.dups += c - 1
	}
	return out, firstErr
}

// check says what must hold after a run over n tasks: nothing handed out twice; every task
// marked pulled in the database (for a run its budget stopped: exactly those handed out); and
// every task marked pulled but not delivered accounted for by a retried 503 (a call that leased
// tasks and then failed).
func (d drained) check(ctx context.Context, tasks *mongo.Collection, projectID string, n int) error {
	pulled, err := tasks.CountDocuments(ctx, bson.M{"project_id": projectID, "source": taskecho.SourceServer, "pulled_at": bson.M{"$ne": nil}})
	if err != nil {
		return fmt.Errorf("count pulled tasks: %w", err)
	}
	switch {
	case d.dups > 0:
		return fmt.Errorf("%d tasks handed out twice", d.dups)
	case d.capped && int(pulled) != d.delivered && d.retried == 0:
		return fmt.Errorf("%d tasks marked pulled, %d handed out when the budget ended", pulled, d.delivered)
	case !d.capped && int(pulled) != n:
		return fmt.Errorf("%d of %d tasks marked pulled after the run", pulled, n)
	case !d.capped && d.delivered != n && d.retried == 0:
		return fmt.Errorf("%d of %d tasks marked pulled but only %d handed out, and no call failed", pulled, n, d.delivered)
	}
	return nil
}

// describe summarises a run for the notes.
func (d drained) describe(n int) string {
	s := fmt.Sprintf("%d of %d handed out in %d calls", d.delivered, n, d.calls)
	if d.capped {
		s += fmt.Sprintf(", stopped by its %s budget", d.elapsed.Round(time.Second))
	} else {
		s += fmt.Sprintf(", the last %s after the start; every client stopped %s later", d.claiming.Round(10*time.Millisecond),
			(d.elapsed - d.claiming).Round(10*time.Millisecond))
	}
	return s
}

// apiPull is one GET …/tasks/pull?limit=50; it returns the task ids received.
func apiPull(ctx context.Context, r *run, key, projectID string) ([]string, error) {
	var ans struct {
		Data struct {
			Tasks []struct {
				TaskID string `json:"task_id"`
			} `json:"tasks"`
		} `json:"data"`
	}
	u := fmt.Sprintf("%s/api/v1/projects/%s/tasks/pull?limit=%d", r.app.apiURL, url.PathEscape(projectID), pullLimit)
	if status, err := call(ctx, "GET", u, key, nil, &ans); status == 503 {
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	} else if err != nil {
		return nil, err
	}
	ids := make([]string, len(ans.Data.Tasks))
	for i, t := range ans.Data.Tasks {
		ids[i] = t.TaskID
	}
	return ids, nil
}

// naivePull is the original TaskEcho approach: one atomic findOneAndUpdate that marks the next unpulled
// project-level server task (same scope and order as the real pull) as pulled by this client.
func naivePull(ctx context.Context, tasks *mongo.Collection, projectID, by string) ([]string, error) {
	now := time.Now().UTC()
	filter := bson.M{"project_id": projectID, "queue_id": nil, "source": taskecho.SourceServer, "deleted_at": nil, "pulled_at": nil}
	update := bson.M{"$set": bson.M{"pulled_at": now, "pulled_by": by, "lease_id": suffix(), "lease_expires_at": now.Add(time.Hour)}}
	opts := options.FindOneAndUpdate().
		SetSort(bson.D{{Key: "priority_rank", Value: -1}, {Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}).
		SetReturnDocument(options.After) // FerretDB v1 does not support a projection here
	var doc struct {
		TaskID string `bson:"task_id"`
	}
	err := tasks.FindOneAndUpdate(ctx, filter, update, opts).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("findOneAndUpdate: %w", err)
	}
	return []string{doc.TaskID}, nil
}

// unpulled counts a project's server tasks that no client has pulled yet.
func unpulled(tasks *mongo.Collection, projectID string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		n, err := tasks.CountDocuments(ctx, bson.M{"project_id": projectID, "source": taskecho.SourceServer, "pulled_at": nil})
		if err != nil {
			return 0, fmt.Errorf("count unpulled tasks: %w", err)
		}
		return n, nil
	}
}
