package taskecho_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// The pullers workload: clients that pull a page of server tasks under a lease and confirm them
// one by one, as a TaskEcho worker does. Each confirm must land within the lease, so a confirm
// that gets slower as tasks pile up turns into expired leases and tasks handed out again.
const (
	pullers      = 8
	pullerLimit  = 20
	pullerLease  = 8 * time.Second
	pullerBudget = 5 * time.Minute
)

// TestPullersConfirmOneByOne is the workload at a size that fits the regular suite; the chaos
// suite runs it at 1,000 tasks (TestPullersConfirmOneByOneAtScale).
func TestPullersConfirmOneByOne(t *testing.T) {
	runPullers(t, 200)
}

// pullerRun is what the pullers saw.
type pullerRun struct {
	mu        sync.Mutex
	confirms  []time.Duration // latency of every confirm call, whatever it answered
	pulls     []time.Duration // latency of every pull call that handed something out
	confirmed map[string]int  // 200 answers per task
	handouts  int             // tasks handed out by pull calls
	expired   int             // confirms answered 409 LEASE_EXPIRED
	conflicts int             // other 409s
	status503 int             // any call answered 503
	other     []string        // any other unexpected answer
}

// runPullers seeds n server tasks in one project and lets the pullers drain it: every task must
// be confirmed exactly once, and no call may answer 503 (the store is up; 8 clients are no
// overload). It logs the confirm latency, which the lease makes the figure that matters, and the
// pull calls' (a lease starts when the call hands its first tasks out, before it returns).
func runPullers(t *testing.T, n int) {
	e := env(t, func(c *config.Echo) { c.PullTimeout = pullerLease })
	seedServerTasks(t, e, "p", n)
	run := &pullerRun{confirmed: map[string]int{}}
	start := time.Now()
	var wg sync.WaitGroup
	for range pullers {
		key := e.NewKey(auth.PermRead, "")
		wg.Go(func() { run.puller(e, key, n, start) })
	}
	wg.Wait()
	elapsed := time.Since(start)

	slices.Sort(run.confirms)
	slices.Sort(run.pulls)
	t.Logf("%d tasks, %d pullers, limit %d, lease %s: %d confirmed in %s; %d handed out; %d confirms, p50 %s, p90 %s, max %s; %d LEASE_EXPIRED, %d other 409, %d 503; %d pulls handing out, p50 %s, p90 %s, max %s",
		n, pullers, pullerLimit, pullerLease, len(run.confirmed), elapsed.Round(time.Millisecond), run.handouts,
		len(run.confirms), pct(run.confirms, 50), pct(run.confirms, 90), pct(run.confirms, 100), run.expired, run.conflicts, run.status503,
		len(run.pulls), pct(run.pulls, 50), pct(run.pulls, 90), pct(run.pulls, 100))
	if len(run.other) > 0 {
		t.Fatalf("unexpected answers (first of %d): %s", len(run.other), run.other[0])
	}
	if run.status503 > 0 {
		t.Fatalf("%d calls answered 503 with the store up", run.status503)
	}
	for id, k := range run.confirmed {
		if k != 1 {
			t.Fatalf("task %s confirmed %d times", id, k)
		}
	}
	if len(run.confirmed) != n {
		t.Fatalf("%d of %d tasks confirmed within %s", len(run.confirmed), n, pullerBudget)
	}
}

// seedServerTasks creates project with one client queue and n pullable project-level server
// tasks, through the service on 8 goroutines (the workload under test starts after).
func seedServerTasks(t *testing.T, e *e2e.Env, project string, n int) {
	t.Helper()
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody(project, "q", ctask("c", "done")), http.StatusOK)
	ctx := e.Context()
	ids := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range ids {
				if err := createTask(ctx, e.EchoService, project, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func createTask(ctx context.Context, svc *taskecho.Server, project string, i int) error {
	f, err := taskecho.ParseTaskCreate(fmt.Appendf(nil, `{"taskId":"t-%05d","name":"task %d","prompt":"do %d"}`, i, i, i))
	if err != nil {
		return err
	}
	_, err = svc.Admin.CreateTask(ctx, taskecho.Actor{Name: "seed"}, project, nil, f)
	return err
}

// puller pulls and confirms until every task is confirmed or the budget is spent. A pull that
// finds nothing while tasks remain (they are leased to others) waits a moment and pulls again.
func (r *pullerRun) puller(e *e2e.Env, key string, n int, start time.Time) {
	for time.Since(start) < pullerBudget && !r.done(n) {
		t0 := time.Now()
		res := e.Do(http.MethodGet, fmt.Sprintf("/api/v1/projects/p/tasks/pull?limit=%d", pullerLimit), key, nil)
		d := time.Since(t0)
		var env envelope
		res.JSON(e.T, &env)
		if res.Status != http.StatusOK {
			r.unexpected("pull", res)
			time.Sleep(time.Second)
			continue
		}
		ids := pulledIDs(env)
		r.mu.Lock()
		r.handouts += len(ids)
		if len(ids) > 0 {
			r.pulls = append(r.pulls, d)
		}
		r.mu.Unlock()
		if len(ids) == 0 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, id := range ids {
			r.confirm(e, key, id, env.Data["lease_id"])
		}
	}
}

func (r *pullerRun) confirm(e *e2e.Env, key, id string, lease any) {
	t0 := time.Now()
	res := e.Do(http.MethodPost, "/api/v1/projects/p/tasks/"+id+"/pull/confirm", key, map[string]any{"lease_id": lease})
	d := time.Since(t0)
	var env envelope
	res.JSON(e.T, &env)
	r.mu.Lock()
	r.confirms = append(r.confirms, d)
	r.mu.Unlock()
	switch {
	case res.Status == http.StatusOK:
		r.mu.Lock()
		r.confirmed[id]++
		r.mu.Unlock()
	case res.Status == http.StatusConflict && env.Error != nil && env.Error.Code == "LEASE_EXPIRED":
		r.mu.Lock()
		r.expired++
		r.mu.Unlock()
	case res.Status == http.StatusConflict:
		r.mu.Lock()
		r.conflicts++
		r.mu.Unlock()
	default:
		r.unexpected("confirm "+id, res)
	}
}

func (r *pullerRun) unexpected(what string, res *e2e.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.Status == http.StatusServiceUnavailable {
		r.status503++
		return
	}
	r.other = append(r.other, fmt.Sprintf("%s: %d %s", what, res.Status, res.Body))
}

func (r *pullerRun) done(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.confirmed) >= n
}

// pct is the p-th percentile of sorted ds (p 100: the largest).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (len(ds)*p + 99) / 100
	return ds[max(i-1, 0)].Round(time.Millisecond)
}
