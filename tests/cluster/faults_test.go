//go:build cluster

package cluster_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

// pipelinesAroundFault creates n pipeline runs (collection_video and model_pose12 in turn, over
// both API instances), half before fault and half after it, and returns their task ids and how
// many of each pipeline ran. It fails the test unless some of the first half were still running
// when the fault came (model_pose12 polls its vendor for about 20 s).
func pipelinesAroundFault(t *testing.T, n int, fault func()) ([]string, map[string]int) {
	t.Helper()
	user, feature := pipelineUser(t, n+10)
	counts := map[string]int{}
	var ids []string
	for i := range n {
		if i == n/2 {
			running := unfinished(t, ids)
			fault()
			if running == 0 {
				t.Fatalf("none of the %d pipelines started before the fault was still running", len(ids))
			}
			t.Logf("fault with %d of %d pipelines running", running, len(ids))
		}
		p := []examplePipeline{collectionVideo, modelPose12}[i%2]
		counts[p.name]++
		ids = append(ids, newRun(p, i, user, feature).create(t, i))
	}
	return ids, counts
}

// unfinished counts the tasks that have not ended yet.
func unfinished(t testing.TB, ids []string) int {
	t.Helper()
	n := 0
	for i, id := range ids {
		var task pipelineTask
		get(t, cl.api(i)+"/api/v1/pipeline-tasks/"+id, &task)
		if !task.final() {
			n++
		}
	}
	return n
}

// Fault: SIGKILL of one of the two history processes while pipelines run; it stays down until
// every pipeline has ended, so its shards must move to the other, then it is started again and
// one more pipeline runs. Must hold: every pipeline succeeds, each step's vendor called exactly
// once per run (no step lost, none repeated).
func TestHistoryKilledPipelinesCompleteOnce(t *testing.T) {
	const history = "temporal-history-1"
	before := vendorCalls(t)
	down := false
	t.Cleanup(func() {
		if down {
			cl.ctl(t, "start", history)
		}
	})
	ids, counts := pipelinesAroundFault(t, 12, func() {
		cl.ctl(t, "kill", history)
		down = true
	})
	awaitPipelines(t, ids, 5*time.Minute)
	cl.ctl(t, "start", history)
	down = false
	user, feature := pipelineUser(t, 1)
	awaitPipelines(t, []string{newRun(collectionVideo, 99, user, feature).create(t, 0)}, 3*time.Minute)
	counts[collectionVideo.name]++
	assertOneCallPerStep(t, before, vendorCalls(t), counts)
}

// Fault: the matching service restarts (SIGTERM, then started again) while pipelines run; its
// task queues are rebuilt from the database. Must hold: every pipeline succeeds with each step's
// vendor called exactly once per run.
func TestMatchingRestartedPipelinesCompleteOnce(t *testing.T) {
	before := vendorCalls(t)
	ids, counts := pipelinesAroundFault(t, 8, func() { cl.ctl(t, "restart", "temporal-matching") })
	awaitPipelines(t, ids, 4*time.Minute)
	assertOneCallPerStep(t, before, vendorCalls(t), counts)
}

// applyOutcome is what happened to one entry key: the statuses it got until accepted, and its task.
type applyOutcome struct {
	key      string
	taskID   string
	statuses []int
	// missingRetryAfter counts 503 answers without a Retry-After header.
	missingRetryAfter int
	err               error
}

// applyUntilAccepted applies key as a client does: again after Retry-After on a 503 (or 1 s on a
// transport error), until accepted, up to deadline.
func applyUntilAccepted(workflow, key string, api int, deadline time.Time) applyOutcome {
	o := applyOutcome{key: key}
	for ; time.Now().Before(deadline); api++ {
		a, err := try(request{method: http.MethodPost, url: cl.api(api) + "/api/workflows/apply", key: cl.adminKey,
			body: applyBody(workflow, key, "applied around an outage")})
		if err != nil {
			o.statuses = append(o.statuses, 0)
			time.Sleep(time.Second)
			continue
		}
		o.statuses = append(o.statuses, a.Status)
		switch {
		case a.Status == http.StatusAccepted || a.Status == http.StatusOK:
			var task entryTask
			if o.err = json.Unmarshal(a.Body, &task); o.err == nil {
				o.taskID = task.TaskID
			}
			return o
		case a.Status == http.StatusServiceUnavailable:
			if retryAfter(a) == 0 {
				o.missingRetryAfter++
			}
			time.Sleep(max(retryAfter(a), 250*time.Millisecond))
		default:
			o.err = fmt.Errorf("apply %s: %d %s", key, a.Status, a.Body)
			return o
		}
	}
	o.err = fmt.Errorf("apply %s: not accepted before the deadline; statuses %v", key, o.statuses)
	return o
}

// Fault: PostgreSQL (Temporal's persistence and visibility) stops for 20 s while clients apply
// entry tasks, then starts again. Load: 4 clients, each applying new keys one after another
// over both API instances, retrying as told. Must hold: while it is down the API answers 503 with
// Retry-After (no other error, no hang); once it is back every key is accepted, its task
// completes, and the same key again names the same task (nothing lost, nothing run twice).
func TestPostgresStoppedDuringEntryApplies(t *testing.T) {
	workflow := entryPipeline(t)
	stopped := false
	t.Cleanup(func() {
		if stopped {
			cl.ctl(t, "start", "postgres")
		}
	})
	var (
		mu       sync.Mutex
		outcomes []applyOutcome
		wg       sync.WaitGroup
	)
	outage := make(chan struct{}) // closed when PostgreSQL is back
	deadline := time.Now().Add(3 * time.Minute)
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				o := applyUntilAccepted(workflow, testenv.Unique(fmt.Sprintf("cluster-pg-%d-%d-", c, i)), c+i, deadline)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				select {
				case <-outage:
					return
				case <-time.After(500 * time.Millisecond): // a client's pace, not a wait for a condition
				}
			}
		}()
	}
	eventually(t, time.Minute, "applies before the outage", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(outcomes) >= 4
	})
	cl.ctl(t, "stop", "postgres")
	stopped = true
	time.Sleep(20 * time.Second) // the outage itself: clients keep applying meanwhile
	cl.ctl(t, "start", "postgres")
	stopped = false
	close(outage)
	wg.Wait()

	unavailable := 0
	for _, o := range outcomes {
		if o.err != nil {
			t.Error(o.err)
			continue
		}
		for _, s := range o.statuses {
			switch s {
			case http.StatusServiceUnavailable:
				unavailable++
			case 0:
				t.Errorf("key %s: an apply got no answer within %s (statuses %v)", o.key, httpClient.Timeout, o.statuses)
			}
		}
		if o.missingRetryAfter > 0 {
			t.Errorf("key %s: %d answers 503 without Retry-After", o.key, o.missingRetryAfter)
		}
	}
	if unavailable == 0 {
		t.Errorf("no apply was answered 503 while PostgreSQL was down (%d keys)", len(outcomes))
	}
	for i, o := range outcomes {
		if o.err != nil {
			continue
		}
		awaitEntryTask(t, i, o.taskID, 3*time.Minute)
		var again entryTask
		call(t, request{method: http.MethodPost, url: cl.api(i+1) + "/api/workflows/apply", key: cl.adminKey,
			body: applyBody(workflow, o.key, "applied around an outage")}, http.StatusOK).decode(t, &again)
		if again.TaskID != o.taskID {
			t.Errorf("key %s names task %s now, %s when accepted", o.key, again.TaskID, o.taskID)
		}
	}
	t.Logf("%d keys applied around a 20 s PostgreSQL outage; %d answers 503 + Retry-After", len(outcomes), unavailable)
}

// Fault: Redis (the pull limiter's store) restarts while two clients pull a project's server
// tasks, one per API instance, two at a time, and confirm each: the restart begins once a fifth
// of the tasks are out, so pulls run before, during and after it. Must hold: every task is
// handed out exactly once and confirmed, no pull answers anything but 200 or 429/503 with
// Retry-After, and a pull afterwards hands out nothing more.
func TestRedisRestartedDuringPullsHandsOutNoTaskTwice(t *testing.T) {
	project, tasks := echoProject(t, 30)
	var (
		mu        sync.Mutex
		handed    = map[string]int{}
		bad       []string
		answers   = map[int]int{}
		restart   sync.Once
		restarted = make(chan error, 1)
		wg        sync.WaitGroup
	)
	note := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(2 * time.Minute)
			for time.Now().Before(deadline) {
				var out int
				note(func() { out = len(handed) })
				if out == len(tasks) {
					return
				}
				if out >= len(tasks)/5 {
					restart.Do(func() { go func() { restarted <- cl.run(t, "restart", "redis") }() })
				}
				p, a, ok := pull(t, c, project, 2)
				note(func() { answers[a.Status]++ })
				if !ok {
					if told := (a.Status == http.StatusTooManyRequests || a.Status == http.StatusServiceUnavailable) && retryAfter(a) > 0; !told {
						note(func() { bad = append(bad, fmt.Sprintf("pull: %d %s", a.Status, a.Body)) })
					}
					time.Sleep(max(retryAfter(a), 250*time.Millisecond))
					continue
				}
				for _, x := range p.Data.Tasks {
					note(func() { handed[x.TaskID]++ })
					if s := confirm(t, c+1, project, x.TaskID, p.Data.LeaseID); s != http.StatusOK {
						note(func() { bad = append(bad, fmt.Sprintf("confirm %s: %d", x.TaskID, s)) })
					}
				}
				time.Sleep(250 * time.Millisecond) // a client's pace, so that pulls span the restart
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-restarted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the Redis restart did not finish within a minute")
	}
	for _, b := range bad {
		t.Error(b)
	}
	for _, id := range tasks {
		if handed[id] != 1 {
			t.Errorf("task %s handed out %d times, want once", id, handed[id])
		}
	}
	if p, a, ok := pull(t, 0, project, 10); !ok || len(p.Data.Tasks) != 0 {
		t.Errorf("a pull after every task was handed out: %d %s", a.Status, a.Body)
	}
	t.Logf("%d tasks handed out once each around a Redis restart; pull answers by status: %v", len(handed), answers)
}
