//go:build chaos

package faults_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// Fault: the worker process gets SIGKILL while async_api pipelines are between their vendor
// submit and their last status poll; another worker process starts 1 s later. Load: 10 runs of
// the example model_pose12 pipeline (submit, then a status poll every second until the 4th
// answers success) posted over HTTP. Must hold: every run succeeds; the vendor's submit endpoint
// (the call that completed before the kill) was called exactly once per run; quota charged once
// per run with no refund.
func TestWorkerSIGKILLMidPipelineRepeatsNoCompletedVendorCall(t *testing.T) {
	env, vend, store := pipelineFaultEnv(t, vendors.Options{PollsToComplete: 4})
	env.StopWorker() // the child process is the only worker on the task queue
	first := startWorkerProcess(t, env.Config)
	ctx := env.Context()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "pipelines", "model_pose12_pipeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	def["name"] = "chaos_pose12_fast_poll"
	step := def["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
	step["polling"].(map[string]any)["interval_seconds"] = 1
	if r := env.Do(http.MethodPost, "/api/v1/pipelines", env.AdminKey, def); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	const runs, quota = 10, 1000
	user, feature := testenv.Unique("chaos-kill-"), "chaos-feature"
	if _, err := store.SetQuota(ctx, user, feature, quota); err != nil {
		t.Fatal(err)
	}
	tasks := postPipelineRuns(t, env, runs, "chaos_pose12_fast_poll", user, feature, func(i int) map[string]any {
		return map[string]any{"input_image": fmt.Sprintf("https://cos.example/kill/%d.jpg", i), "model_type": "m", "style": "s"}
	})
	e2e.Eventually(t, 2*time.Minute, "every run to submit its vendor job and poll once", func() bool {
		return vend.Calls("runninghub", "/workflow/execute") == runs && vend.Calls("runninghub", "/workflow/status") >= runs
	})
	polls := vend.Calls("runninghub", "/workflow/status")
	first.kill()
	time.Sleep(time.Second)
	startWorkerProcess(t, env.Config)

	awaitPipelinesSucceeded(t, env, store, tasks)
	if n := vend.Calls("runninghub", "/workflow/execute"); n != runs {
		t.Errorf("vendor job submitted %d times for %d runs (a completed submit was repeated)", n, runs)
	}
	left := quotaLeft(t, env, store, user, feature)
	if left != quota-runs {
		t.Errorf("quota remaining %d, want %d", left, quota-runs)
	}
	t.Logf("%d async pipelines, worker SIGKILLed after %d polls: all succeeded, %d submits, %d polls in all, quota %d",
		runs, polls, runs, vend.Calls("runninghub", "/workflow/status"), left)
}

// Fault: the worker process running the crawl Kafka consumer gets SIGKILL while it counts, so
// the batch it was working on is not committed; a new worker process joins the consumer group.
// Load: 10,000 tweet messages (5% sent twice, as the crawler may) over 4 partitions, half before
// the kill and half after. Must hold: the redelivered records are not counted again — the task
// completes with processed_tweets == total_tweets exactly.
func TestCrawlConsumerKilledBeforeCommitDoesNotDoubleCount(t *testing.T) {
	env := e2e.New(t, func(c *config.Config) {
		c.Crawl.ConsumerGroup = testenv.Unique("chaos-kill-crawl-")
		c.Crawl.BatchSize = 100 // small batches: the kill lands between counting and committing
		// The e2e harness runs the background services in the test process; only the child's
		// consumer may consume, so that killing it is killing the consumer.
		c.Crawl.Consumers = false
	})
	child := *env.Config
	child.Crawl.Consumers = true
	env.StopWorker()
	first := startWorkerProcess(t, &child)

	load := newCrawlLoad(t, env, 9500, 11)
	atKill := load.waitCounting(t, 2*time.Minute)
	first.kill()
	load.produceRest(t)
	startWorkerProcess(t, &child)
	load.requireExactCompletion(t, 4*time.Minute)
	t.Logf("%d tweet messages, consumer SIGKILLed at processed=%d: completed with processed == total == %d", load.sent, atKill, load.total)
}
