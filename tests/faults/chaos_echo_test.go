//go:build chaos

package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/taskecho/taskechoprom"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

// seedEchoQueue creates a project and a queue (one client push, as a TaskEcho client would),
// then n server tasks in status in the queue and m pullable server tasks at project level,
// through the echo service's CreateTask on 8 goroutines.
func seedEchoQueue(t *testing.T, env *e2e.Env, projectID, queueID, status string, n, m int) {
	t.Helper()
	ctx := env.Context()
	svc := env.EchoService
	body, _ := json.Marshal(map[string]any{"project_id": projectID, "project_name": "chaos", "queue_id": queueID,
		"queue_name": queueID, "tasks": []map[string]any{{"id": "client-1", "name": "client task", "prompt": "p", "status": "done"}}})
	in, err := taskecho.ParseSubmit(body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	actor := taskecho.Actor{Name: "chaos-seed"}
	if _, err := svc.Intake.Submit(ctx, actor, in, taskecho.ConflictOverwrite); err != nil {
		t.Fatal(err)
	}
	create := func(i int) error {
		queue, body := &queueID, fmt.Sprintf(`{"taskId":"q-%05d","name":"queue task","prompt":"p","status":%q}`, i, status)
		if i >= n {
			queue, body = nil, fmt.Sprintf(`{"taskId":"s-%05d","name":"server task","prompt":"p"}`, i)
		}
		f, err := taskecho.ParseTaskCreate([]byte(body))
		if err != nil {
			return err
		}
		_, err = svc.Admin.CreateTask(ctx, actor, projectID, queue, f)
		return err
	}
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for i := int(next.Add(1) - 1); i < n+m; i = int(next.Add(1) - 1) {
				if err := create(i); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// counterValue reads a counter's current value.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// pullIDs is one GET …/tasks/pull; it fails the test on anything but 200.
func pullIDs(t *testing.T, env *e2e.Env, key, projectID string, limit int) []string {
	t.Helper()
	r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/projects/%s/tasks/pull?limit=%d", projectID, limit), key, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("pull: %d %s", r.Status, r.Body)
	}
	var ans pullAnswer
	r.JSON(t, &ans)
	return ans.ids()
}

// pullAnswer is the part of a pull's answer the chaos tests read.
type pullAnswer struct {
	Data struct {
		Tasks []struct {
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	} `json:"data"`
}

func (a pullAnswer) ids() []string {
	ids := make([]string, len(a.Data.Tasks))
	for i, x := range a.Data.Tasks {
		ids[i] = x.TaskID
	}
	return ids
}

// Fault: Redis (the pull limiter's store) stops while clients pull, and comes back. Load: 60
// server tasks pulled 5 at a time by one read key: 2 pulls before, 8 during and the rest after
// the outage. Must hold: every pull during the outage answers 200 with tasks (the limiter fails
// open and counts the failure in taskloom_echo_ratelimit_errors_total), and the 60 tasks are
// handed out exactly once in all.
func TestRedisDownEchoPullsContinue(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	env := e2e.New(t, func(c *config.Config) { c.Redis.URL = "redis://" + mr.Addr() })
	const tasks = 60
	project := testenv.Unique("chaos-pull-")
	seedEchoQueue(t, env, project, "q.json", "done", 0, tasks)
	key := env.NewKey(auth.PermRead, "")
	seen := map[string]int{}
	pull := func() int {
		ids := pullIDs(t, env, key, project, 5)
		for _, id := range ids {
			seen[id]++
		}
		return len(ids)
	}
	pull()
	pull()
	errsBefore := counterValue(t, taskechoprom.New(env.Platform.Metrics).RateLimitErrors)
	mr.Close()
	during := 0
	for range 8 {
		if n := pull(); n != 5 {
			t.Fatalf("pull with Redis down gave %d tasks, want 5", n)
		}
		during++
	}
	failOpen := counterValue(t, taskechoprom.New(env.Platform.Metrics).RateLimitErrors) - errsBefore
	if failOpen < float64(during) {
		t.Errorf("limiter failures counted %v for %d pulls with Redis down", failOpen, during)
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	for pull() > 0 {
	}
	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	if len(seen) != tasks || dups != 0 {
		t.Fatalf("%d distinct tasks handed out (want %d), %d duplicates", len(seen), tasks, dups)
	}
	t.Logf("%d pulls with Redis down all answered 200 (fail-open counted %v); %d tasks handed out once each", during, failOpen, tasks)
}

// Fault: the worker process running a queue operation's workflow gets SIGKILL between two of
// its batches; another worker process starts. Load: a reset-error over a queue of 1,500 error
// tasks (3 batches of 500). Must hold: the operation finishes and every task is pending again
// (no batch skipped) and it reports exactly the tasks it reset, though the batch cut by the kill
// ran twice.
func TestWorkerSIGKILLMidQueueOperationFinishes(t *testing.T) {
	env := e2e.New(t, func(c *config.Config) { c.Echo.QueueOpWait = 10 * time.Millisecond })
	env.StopWorker()
	first := startWorkerProcess(t, env.Config)
	const n = 1500
	project, queue := testenv.Unique("chaos-qop-"), "big.json"
	seedEchoQueue(t, env, project, queue, "error", n, 0)
	ctx := env.Context()

	r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/projects/%s/queues/%s/reset-error", project, queue), env.AdminKey, nil)
	if r.Status != http.StatusAccepted && r.Status != http.StatusOK {
		t.Fatalf("reset-error: %d %s", r.Status, r.Body)
	}
	tasks := env.Platform.Mongo.Collection(taskechodb.CollTasks)
	pending := func() int64 {
		c, err := tasks.CountDocuments(ctx, bson.M{"project_id": project, "queue_id": queue, "status": taskecho.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var atKill int64
	e2e.Eventually(t, 2*time.Minute, "the first batch to be applied", func() bool {
		atKill = pending()
		return atKill > 0
	})
	first.kill()
	if atKill == n {
		t.Fatalf("the operation finished before the kill (%d tasks reset); the fault was not injected", atKill)
	}
	startWorkerProcess(t, env.Config)

	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var res taskechowf.QueueOpResult
	id := taskechowf.QueueOpWorkflowID(project, queue, queueop.ResetError)
	if err := env.Platform.Temporal.GetWorkflow(wctx, id, "").Get(wctx, &res); err != nil {
		t.Fatalf("queue operation did not finish: %v", err)
	}
	if got := pending(); got != n {
		t.Errorf("%d of %d tasks pending after the operation", got, n)
	}
	if res.Changed != n {
		t.Errorf("operation reports %d tasks changed, want the %d it reset", res.Changed, n)
	}
	t.Logf("reset-error over %d tasks, worker SIGKILLed at %d reset: finished, %d pending; the operation reports %d changed in %d batches",
		n, atKill, n, res.Changed, res.Batches)
}
