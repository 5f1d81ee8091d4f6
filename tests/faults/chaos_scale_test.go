//go:build chaos

package faults_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

// Scale-out sizes: small enough for a 2-core machine, large enough that every kind of work is in
// flight while each process restarts.
const (
	scalePipelines = 20
	scaleApplies   = 20
	scaleEchoTasks = 200
	scalePullers   = 4
	scalePullLimit = 2
	scaleTweets    = 480
	scaleQuota     = 1000
	// scalePace spaces one client's requests so that the load spans the restarts.
	scalePace = 1500 * time.Millisecond
)

// Fault: a deployment of two `starter api` and two `starter worker` processes (one Temporal, one
// database, one Redis, one Kafka) is rolled: each process in turn gets SIGTERM, exits, and starts
// again (the APIs on the same address); then one worker gets SIGKILL, the last quarter of a crawl is produced, and it starts again. No worker
// of the test binary polls the task queue. Load, alternating between the two APIs throughout:
// 20 pipeline-task creations (Idempotency-Key, retried with the same key on transport errors and
// 5xx), 20 entry applies (context.idempotencyKey, retried likewise), 4 read keys pulling 200
// server tasks 2 at a time, one crawl (480 tweets, 5% sent twice) consumed by the workers' shared
// consumer group, and the echo sweeper and provider-health schedules ticking every 2 s (applied
// twice, as two rollouts would). Must hold: every accepted request finished (pipelines succeeded,
// entry tasks completed, the crawl completed with processed == total), nothing was done twice
// (one task and one quota charge per key, each server task handed to exactly one puller, tweets
// counted once), both workers shared the Kafka partitions before and after, and each schedule
// started one workflow per action, none overlapping, all completed.
func TestScaleOutTwoAPIsTwoWorkersRollingRestart(t *testing.T) {
	began := time.Now()
	d := newScaleDeployment(t)

	for range 2 {
		out := runStarter(t, &d.child, "schedules", "apply", "-o", "json")
		type scheduleState struct{ ID, State string }
		var applied []scheduleState
		if err := json.Unmarshal([]byte(out), &applied); err != nil {
			t.Fatalf("schedules apply -o json: %v\n%s", err, out)
		}
		for _, id := range d.schedules {
			if !slices.Contains(applied, scheduleState{id, "applied"}) {
				t.Fatalf("schedules apply did not apply %s:\n%s", id, out)
			}
		}
	}
	first := d.awaitGroupSplit(t, nil)
	crawl := newCrawlLoad(t, d.env, scaleTweets, 23)

	l := d.startLoad(t)
	e2e.Eventually(t, time.Minute, "every kind of request to be answered before the restarts", func() bool {
		return l.created.Load() >= 2 && l.applied.Load() >= 2 && l.pulled.Load() >= 4
	})
	restartsBegan := time.Now()
	l.restarting.Store(true)
	for i := range d.apis {
		d.rollAPI(t, i)
		l.awaitProgress(t)
	}
	d.rollWorker(t, 0)
	l.awaitProgress(t)
	crawl.produceNext(t, len(crawl.rest)/2)
	d.rollWorker(t, 1)
	l.awaitProgress(t)
	// The last quarter of the crawl lands while a worker lies dead: the records of its partitions
	// wait for the group to notice (session timeout) and hand them to a live member.
	beforeKill := d.awaitGroupSplit(t, nil)
	d.workers[0].kill()
	killed := time.Now()
	crawl.produceRest(t)
	d.restartKilled(t, 0, killed)
	l.awaitProgress(t)
	l.restarting.Store(false)
	restarts := time.Since(restartsBegan)
	last := d.awaitGroupSplit(t, beforeKill)
	regrouped := time.Since(killed)
	l.wait()

	d.checkPipelines(t, l)
	d.checkApplies(t, l)
	handed := d.checkPulls(t, l)
	crawl.requireExactCompletion(t, 4*time.Minute)
	if p := crawl.processed(); p != crawl.total {
		t.Errorf("task_progress processed_tweets %d, want the %d distinct tweets", p, crawl.total)
	}
	for m := range last {
		if _, ok := first[m]; ok {
			t.Errorf("member %s owned partitions before and after the restarts: the group did not rebalance", m)
		}
	}
	actions := map[string]string{}
	for _, id := range d.schedules {
		n, skipped, longest := checkScheduleRanOnce(t, d.env, id)
		actions[id] = fmt.Sprintf("%d started, %d ticks skipped as overlaps, longest run %s", n, skipped, longest.Round(time.Millisecond))
	}
	pollers := taskQueuePollers(t, d.env)
	self := fmt.Sprintf("%d@", os.Getpid())
	for _, p := range pollers {
		if strings.HasPrefix(p, self) {
			t.Errorf("the test binary polled the task queue (%s): the workers were not alone", p)
		}
	}

	t.Logf("deployment: 2 API + 2 worker processes; rolling SIGTERM restarts (API exit→healthz %v, worker exit→polling %v, crawl group re-split %v) then worker SIGKILL→polling %v; restart phase %s; group re-split %s after the SIGKILL",
		d.apiRestarts, d.workerRestarts, d.regroups, d.killRestart, restarts.Round(time.Millisecond), regrouped.Round(time.Millisecond))
	t.Logf("answered while restarting: %d of %d creations, %d of %d applies, %d of %d pulls",
		l.createdDuring.Load(), scalePipelines, l.appliedDuring.Load(), scaleApplies, l.pullsDuring.Load(), l.pulls.Load())
	t.Logf("pipelines %d succeeded, %d charges; applies %d completed; %d server tasks each handed out once; crawl %d messages, processed == total == %d",
		scalePipelines, scalePipelines, scaleApplies, handed, crawl.sent, crawl.total)
	t.Logf("crawl group: %d members before %v, %d after %v (all new); schedules %v (one workflow each, none overlapping, all completed); %d poller identities seen, none in the test binary",
		len(first), first, len(last), last, actions, len(pollers))
	t.Logf("elapsed %s", time.Since(began).Round(time.Second))
}

// scaleDeployment is the application as two API and two worker processes over one env's
// dependencies, plus what the load needs: an entry pipeline, quotas, seeded server tasks and
// read keys.
type scaleDeployment struct {
	env            *e2e.Env
	store          *pipelinedb.Store
	child          config.Config
	apis           [2]*apiProc
	workers        [2]*workerProc
	user, feature  string
	project        string
	readKeys       []string
	schedules      []string
	apiRestarts    []time.Duration
	workerRestarts []time.Duration
	regroups       []time.Duration
	killRestart    time.Duration
}

func newScaleDeployment(t *testing.T) *scaleDeployment {
	t.Helper()
	env, _, store := pipelineFaultEnvFrom(t, e2e.NewWithoutWorker, vendors.Options{}, func(c *config.Config) {
		c.Crawl.ConsumerGroup = testenv.Unique("scale-crawl-")
		c.Crawl.BatchSize = 50
		// The test binary's background services must not consume: the workers are the group.
		c.Crawl.Consumers = false
		c.Echo.SweepInterval = 2 * time.Second
		c.Pipeline.HealthInterval = 2 * time.Second
		c.Echo.PullRateLimitPerMinute, c.Echo.PullRateLimitPerHour = 600, 10000
		c.Entry.IdempotencyWindow = time.Hour
	})
	d := &scaleDeployment{env: env, store: store, child: *env.Config, user: testenv.Unique("scale-"), feature: "scale-feature",
		project: testenv.Unique("scale-pull-"), schedules: []string{taskechowf.SweeperScheduleID, pipelinewf.HealthScheduleID}}
	d.child.Crawl.Consumers = true
	t.Cleanup(d.deleteSchedules)
	ctx := env.Context()
	if _, err := store.SetQuota(ctx, d.user, d.feature, scaleQuota); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, env.Config.Entry.UserID, env.Config.Entry.FeatureID, scaleQuota); err != nil {
		t.Fatal(err)
	}
	publishEntryPipeline(t, env, store)
	seedEchoQueue(t, env, d.project, "q.json", "done", 0, scaleEchoTasks)
	for range scalePullers {
		d.readKeys = append(d.readKeys, env.NewKey(auth.PermRead, ""))
	}
	for i := range d.workers {
		d.workers[i] = startWorkerProcess(t, &d.child)
	}
	for i := range d.apis {
		d.apis[i] = startAPIProcess(t, &d.child)
	}
	return d
}

// scaleEntryPipeline is the pipeline entry applies run: one sync step on the fake image vendor,
// fed the user text.
const scaleEntryPipeline = "scale_entry_image"

func publishEntryPipeline(t *testing.T, env *e2e.Env, store *pipelinedb.Store) {
	t.Helper()
	def := &pipeline.Definition{Name: scaleEntryPipeline, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "image", Type: pipeline.StepSyncAPI, ProviderRef: "tencent_cloud_infinite", Endpoint: "/image/process",
		InputMapping:  map[string]any{"image_url": "${input_data.user_text}"},
		OutputMapping: map[string]string{"result_url": "$.data.output_url"},
		Retry:         &pipeline.Retry{MaxAttempts: 3}, TimeoutSeconds: 20,
	}}}}
	if _, _, err := store.PublishSchema(env.Context(), def); err != nil {
		t.Fatal(err)
	}
}

// deleteSchedules removes the schedules (their IDs are fixed, and the dev server outlives the test).
func (d *scaleDeployment) deleteSchedules() {
	for _, id := range d.schedules {
		_ = d.env.Platform.Temporal.ScheduleClient().GetHandle(d.env.Context(), id).Delete(d.env.Context())
	}
}

// rollAPI restarts API process i on its address (SIGTERM, exit, start, /healthz answers).
func (d *scaleDeployment) rollAPI(t *testing.T, i int) {
	t.Helper()
	began := time.Now()
	d.apis[i].proc.terminate(t, 30*time.Second)
	d.apis[i] = startAPIProcessAt(t, &d.child, d.apis[i].addr)
	d.apiRestarts = append(d.apiRestarts, time.Since(began).Round(time.Millisecond))
}

// rollWorker restarts worker i (SIGTERM, exit, start) and waits until the new process polls the
// task queue and the crawl group has split the partitions between it and the other worker.
func (d *scaleDeployment) rollWorker(t *testing.T, i int) {
	t.Helper()
	before := d.awaitGroupSplit(t, nil)
	began := time.Now()
	d.workers[i].terminate(t, 30*time.Second)
	d.workers[i] = startWorkerProcess(t, &d.child)
	d.awaitPolling(t, d.workers[i])
	d.workerRestarts = append(d.workerRestarts, time.Since(began).Round(time.Millisecond))
	d.awaitGroupSplit(t, before)
	d.regroups = append(d.regroups, time.Since(began).Round(time.Millisecond))
}

// restartKilled starts worker i again a second after it was SIGKILLed and waits until it polls.
func (d *scaleDeployment) restartKilled(t *testing.T, i int, killed time.Time) {
	t.Helper()
	time.Sleep(time.Until(killed.Add(time.Second)))
	d.workers[i] = startWorkerProcess(t, &d.child)
	d.awaitPolling(t, d.workers[i])
	d.killRestart = time.Since(killed).Round(time.Millisecond)
}

// awaitPolling waits until w's process polls the task queue (the SDK's identity starts with
// the process id).
func (d *scaleDeployment) awaitPolling(t *testing.T, w *workerProc) {
	t.Helper()
	self := fmt.Sprintf("%d@", w.cmd.Process.Pid)
	e2e.Eventually(t, time.Minute, "worker "+self+" to poll", func() bool {
		return slices.ContainsFunc(taskQueuePollers(t, d.env), func(id string) bool { return strings.HasPrefix(id, self) })
	})
}

// awaitGroupSplit waits (up to the 45 s session timeout of a SIGKILLed member, and its rebalance)
// until two members share the data topic's partitions, at least one of them not in before.
func (d *scaleDeployment) awaitGroupSplit(t *testing.T, before map[string][]int32) map[string][]int32 {
	t.Helper()
	var a map[string][]int32
	e2e.Eventually(t, 3*time.Minute, "the crawl group to split the partitions between the two workers again", func() bool {
		a = groupAssignment(t, d.env.Config.Kafka.Brokers, d.env.Config.Crawl.ConsumerGroup, d.env.Config.Crawl.DataTopic)
		changed := before == nil
		for m := range a {
			if _, ok := before[m]; !ok {
				changed = true
			}
		}
		return changed && splitBetween(a, 2, devstack.KafkaPartitions)
	})
	return a
}

// scaleLoad is the mixed load the clients drive while the deployment rolls.
type scaleLoad struct {
	wg                sync.WaitGroup
	restarting        atomic.Bool
	keys, applyKeys   []string
	tasks, entryTasks []string
	pulledBy          [][]string // per puller, the server task ids it was handed
	created, applied  atomic.Int64
	pulled, pulls     atomic.Int64
	createdDuring     atomic.Int64
	appliedDuring     atomic.Int64
	pullsDuring       atomic.Int64
	apiURLs           [2]string
}

// startLoad starts the clients: one creating pipelines, one applying, and the pullers, each
// alternating between the two APIs.
func (d *scaleDeployment) startLoad(t *testing.T) *scaleLoad {
	l := &scaleLoad{keys: make([]string, scalePipelines), applyKeys: make([]string, scaleApplies),
		tasks: make([]string, scalePipelines), entryTasks: make([]string, scaleApplies), pulledBy: make([][]string, scalePullers),
		apiURLs: [2]string{d.apis[0].url, d.apis[1].url}}
	for i := range l.keys {
		l.keys[i] = testenv.Unique("scale-key-")
	}
	for i := range l.applyKeys {
		l.applyKeys[i] = testenv.Unique("scale-apply-")
	}
	l.run(func() {
		for i := range scalePipelines {
			l.tasks[i] = createWithRetry(t, l.apiURLs[i%2], d.env.AdminKey, l.keys[i], d.pipelineBody(i))
			l.count(&l.created, &l.createdDuring)
			time.Sleep(scalePace)
		}
	})
	l.run(func() {
		for i := range scaleApplies {
			l.entryTasks[i] = applyWithRetry(t, l.apiURLs[(i+1)%2], d.env.AdminKey, l.applyKeys[i], map[string]any{
				"workflowId": scaleEntryPipeline, "userText": fmt.Sprintf("https://cos.example/scale-entry/%d.jpg", i),
				"historyChunks": []string{}, "coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": fmt.Sprintf("chat-%d", i)}},
				"telemetry": map[string]any{"channel": "http"}})
			l.count(&l.applied, &l.appliedDuring)
			time.Sleep(scalePace)
		}
	})
	for p := range scalePullers {
		l.run(func() {
			for i := 0; ; i++ {
				ids := pullWithRetry(t, l.apiURLs[(p+i)%2], d.readKeys[p], d.project, scalePullLimit)
				l.count(&l.pulls, &l.pullsDuring)
				if len(ids) == 0 {
					return
				}
				l.pulledBy[p] = append(l.pulledBy[p], ids...)
				l.pulled.Add(int64(len(ids)))
				time.Sleep(time.Second)
			}
		})
	}
	return l
}

func (l *scaleLoad) run(f func()) {
	l.wg.Add(1)
	go func() { defer l.wg.Done(); f() }()
}

// count adds one answered request, and one to during when it was answered while restarting.
func (l *scaleLoad) count(all, during *atomic.Int64) {
	all.Add(1)
	if l.restarting.Load() {
		during.Add(1)
	}
}

func (l *scaleLoad) wait() { l.wg.Wait() }

// awaitProgress waits until every kind of client got another answer since the last call (or
// has finished), so that each restart happens under load.
func (l *scaleLoad) awaitProgress(t *testing.T) {
	t.Helper()
	c, a, p := l.created.Load(), l.applied.Load(), l.pulls.Load()
	e2e.Eventually(t, 2*time.Minute, "the clients to get answers between restarts", func() bool {
		return (l.created.Load() > c || c == scalePipelines) && (l.applied.Load() > a || a == scaleApplies) &&
			(l.pulls.Load() > p || l.pulled.Load() == scaleEchoTasks)
	})
}

func (d *scaleDeployment) pipelineBody(i int) map[string]any {
	return map[string]any{"pipeline": "basic_clean_pipeline", "user_id": d.user, "feature_id": d.feature,
		"input_data": map[string]any{"input_image": fmt.Sprintf("https://cos.example/scale/%d.jpg", i)}}
}

// checkPipelines: one distinct task per key, every one succeeded, one quota charge each.
func (d *scaleDeployment) checkPipelines(t *testing.T, l *scaleLoad) {
	t.Helper()
	seen := map[string]bool{}
	for i, id := range l.tasks {
		if id == "" || seen[id] {
			t.Fatalf("pipeline key %d: task %q (empty or shared)", i, id)
		}
		seen[id] = true
	}
	awaitPipelinesSucceeded(t, d.env, d.store, l.tasks)
	ctx := d.env.Context()
	q, err := d.store.GetQuota(ctx, d.user, d.feature)
	if err != nil {
		t.Fatal(err)
	}
	if q.Consumed != scalePipelines || q.Refunded != 0 {
		t.Errorf("pipeline quota %+v: want exactly %d charges", q, scalePipelines)
	}
	n, err := d.env.Platform.Mongo.Collection(pipelinedb.CollTasks).CountDocuments(ctx, bson.D{{Key: "user_id", Value: d.user}})
	if err != nil || n != scalePipelines {
		t.Errorf("%d pipeline task documents for %d keys (%v)", n, scalePipelines, err)
	}
}

// checkApplies: one entry task per key, each completed, with one pipeline run and one charge.
func (d *scaleDeployment) checkApplies(t *testing.T, l *scaleLoad) {
	t.Helper()
	ctx := d.env.Context()
	runs := entrydb.New(d.env.Platform.Mongo)
	for i, id := range l.entryTasks {
		if id == "" {
			t.Fatalf("apply %d was not accepted", i)
		}
		var status string
		e2e.Eventually(t, 3*time.Minute, "entry task "+id+" to finish", func() bool {
			r, err := runs.Get(ctx, id)
			if err == nil {
				status = r.Status
			}
			return entry.Terminal(status)
		})
		if status != entry.StatusCompleted {
			t.Errorf("entry task %s (key %s) ended %s", id, l.applyKeys[i], status)
		}
		n, err := d.env.Platform.Mongo.Collection(entrydb.CollRuns).CountDocuments(ctx, bson.D{{Key: "idempotency_key", Value: l.applyKeys[i]}})
		if err != nil || n != 1 {
			t.Errorf("apply key %s: %d workflow_runs documents (%v)", l.applyKeys[i], n, err)
		}
	}
	q, err := d.store.GetQuota(ctx, d.env.Config.Entry.UserID, d.env.Config.Entry.FeatureID)
	if err != nil {
		t.Fatal(err)
	}
	if q.Consumed != scaleApplies || q.Refunded != 0 {
		t.Errorf("entry quota %+v: want exactly %d charges", q, scaleApplies)
	}
}

// checkPulls: every seeded server task was handed out, each to exactly one puller; it returns
// how many were.
func (d *scaleDeployment) checkPulls(t *testing.T, l *scaleLoad) int {
	t.Helper()
	owner := map[string]int{}
	for p, ids := range l.pulledBy {
		for _, id := range ids {
			if q, dup := owner[id]; dup {
				t.Errorf("server task %s handed to puller %d and puller %d", id, q, p)
			}
			owner[id] = p
		}
	}
	if len(owner) != scaleEchoTasks {
		t.Errorf("%d distinct server tasks handed out, want all %d", len(owner), scaleEchoTasks)
	}
	return len(owner)
}
