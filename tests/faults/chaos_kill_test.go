//go:build chaos

package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// Fault: the worker process gets SIGKILL while async_api pipelines are between their vendor
// submit and their last status poll; another worker process starts 1 s later. Load: 10 runs of
// the seed's model_pose12 pipeline (submit, then a status poll every second until the 4th
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
	var tasks []string
	for i := range runs {
		r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
			"pipeline": "chaos_pose12_fast_poll", "user_id": user, "feature_id": feature,
			"input_data": map[string]any{"input_image": fmt.Sprintf("https://cos.example/kill/%d.jpg", i), "model_type": "m", "style": "s"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("run %d: %d %s", i, r.Status, r.Body)
		}
		var created struct {
			TaskID string `json:"task_id"`
		}
		r.JSON(t, &created)
		tasks = append(tasks, created.TaskID)
	}
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

	cfg := env.Config.Crawl
	topics := crawl.Topics{Control: cfg.ControlTopic, Data: cfg.DataTopic}
	f := crawl.FakeCrawl{OriginalTaskID: time.Now().UnixNano()%1_000_000_000 + 1, Tweets: 9500, DupRate: 0.05, RepliesPerTweet: 1, Seed: 11}
	recs, err := f.Records(topics)
	if err != nil {
		t.Fatal(err)
	}
	_, data := f.Messages()
	total := int64(len(data))
	prod, err := kgo.NewClient(kgo.SeedBrokers(env.Config.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx := env.Context()
	half := len(recs) / 2
	if err := prod.ProduceSync(ctx, recs[:half]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	progress := crawl.NewPlatformProgressStore(env.Platform)
	var atKill int64
	e2e.Eventually(t, 2*time.Minute, "the child's consumer to start counting", func() bool {
		p, err := progress.Get(ctx, f.OriginalTaskID)
		atKill = p.ProcessedTweets
		return err == nil && p.ProcessedTweets > 0
	})
	first.kill()
	if err := prod.ProduceSync(ctx, recs[half:]...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	startWorkerProcess(t, &child)

	wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	var st crawlwf.State
	for {
		err := env.Platform.Temporal.GetWorkflow(wctx, crawlwf.WorkflowID(f.OriginalTaskID), "").Get(wctx, &st)
		if err == nil {
			break
		}
		if wctx.Err() != nil {
			p, _ := progress.Get(ctx, f.OriginalTaskID)
			t.Fatalf("crawl task did not finish after the consumer was killed: %v (progress %+v)", err, p)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Status != crawl.TaskCompleted || st.ProcessedTweets != total || st.TotalTweets != total {
		t.Fatalf("task ended %s with processed %d, total %d; want Completed with %d of %d", st.Status, st.ProcessedTweets, st.TotalTweets, total, total)
	}
	t.Logf("%d tweet messages, consumer SIGKILLed at processed=%d: completed with processed == total == %d", total, atKill, total)
}
