package crawl_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/worker"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

var crawlTopics = []string{crawl.ControlTopicDefault, crawl.DataTopicDefault, "crawl_dead_letter", "task_scheduler_replies"}

// crawlEnv is the whole application over a kfake cluster of its own (so the
// test can make offset commits fail) with the given crawler settings.
type crawlEnv struct {
	*e2e.Env
	cluster    *kfake.Cluster
	failCommit atomic.Bool
}

type envOption func(*config.Crawl)

// fakeCrawler is the crawler command running this test binary as the fake
// crawler with extra flags.
func fakeCrawler(flags string) envOption {
	return func(c *config.Crawl) {
		c.CrawlerCommand = "env " + fakeCrawlerEnv + "=1 {self} --original-task-id {id} --brokers {brokers} " + flags
	}
}

func deadline(d time.Duration) envOption {
	return func(c *config.Crawl) { c.CompletionDeadline = d }
}

// noConsumers leaves the consumers to the test (it kills and restarts them).
func noConsumers() envOption {
	return func(c *config.Crawl) { c.Consumers = false }
}

func newCrawlEnv(t *testing.T, opts ...envOption) *crawlEnv {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.SeedTopics(4, crawlTopics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ce := &crawlEnv{cluster: cluster}
	// While failCommit is set, offset commits fail: a consumer stopped then
	// is a process killed before its commit reached the broker.
	cluster.ControlKey(kmsg.OffsetCommit.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if !ce.failCommit.Load() {
			return nil, nil, false
		}
		return failedCommit(req.(*kmsg.OffsetCommitRequest)), nil, true
	})
	ce.Env = e2e.New(t, func(c *config.Config) {
		c.Kafka.Brokers = cluster.ListenAddrs()
		c.Crawl.ConsumerGroup = "crawl-" + fmt.Sprint(rand.Uint64())
		c.Crawl.CompletionDeadline = time.Minute
		for _, o := range opts {
			o(&c.Crawl)
		}
	})
	return ce
}

func failedCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.InvalidCommitOffsetSize.Code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// taskID is random so that workflow IDs never meet across tests.
func taskID() int64 { return 1 + rand.Int64N(1<<50) }

// startConsumer runs the worker's consumer until stop is called.
func (e *crawlEnv) startConsumer(t *testing.T) (stop func()) {
	t.Helper()
	stop, _ = e.startTalliedConsumer(t)
	return stop
}

// startTalliedConsumer runs the worker's consumer with every MongoDB
// command it issues (per-record bookkeeping, notifications) in the tally.
func (e *crawlEnv) startTalliedConsumer(t *testing.T) (stop func(), tally *mongox.Tally) {
	t.Helper()
	c, err := worker.NewCrawlConsumer(e.Platform)
	if err != nil {
		t.Fatal(err)
	}
	tallies := make(chan *mongox.Tally, 1)
	stop = testenv.Go(t, func(ctx context.Context) error {
		ctx, tl := mongox.WithTally(ctx)
		tallies <- tl
		return c.Run(ctx)
	})
	return stop, <-tallies
}

// task is GET /api/v1/crawl-tasks/{id}'s body.
type task struct {
	OriginalTaskID  int64   `json:"original_task_id"`
	WorkflowID      string  `json:"workflow_id"`
	Status          string  `json:"status"`
	Source          string  `json:"source"`
	TotalTweets     *int64  `json:"total_tweets"`
	ProcessedTweets int64   `json:"processed_tweets"`
	DuplicateTweets int64   `json:"duplicate_tweets"`
	DeadLettered    int64   `json:"dead_lettered_records"`
	MissingTweets   *int64  `json:"missing_tweets"`
	FailureReason   string  `json:"failure_reason"`
	FinishedAt      *string `json:"finished_at"`
	WaitingFor      *struct {
		Reason string  `json:"reason"`
		Detail string  `json:"detail"`
		Until  *string `json:"until"`
	} `json:"waiting_for"`
	Crawler *struct {
		Command   []string `json:"command"`
		ExitCode  int      `json:"exit_code"`
		LastLines []string `json:"last_lines"`
	} `json:"crawler"`
}

func (e *crawlEnv) create(t *testing.T, id int64) {
	t.Helper()
	r := e.Do(http.MethodPost, "/api/v1/crawl-tasks", e.AdminKey, map[string]any{"original_task_id": id})
	if r.Status != http.StatusAccepted {
		t.Fatalf("POST = %d %s", r.Status, r.Body)
	}
}

func (e *crawlEnv) get(t *testing.T, id int64) (int, task) {
	t.Helper()
	r := e.Do(http.MethodGet, fmt.Sprintf("/api/v1/crawl-tasks/%d", id), e.AdminKey, nil)
	var v task
	if r.Status == http.StatusOK {
		r.JSON(t, &v)
	}
	return r.Status, v
}

// finished waits until the task is Completed or Failed and returns it.
func (e *crawlEnv) finished(t *testing.T, id int64) task {
	t.Helper()
	var v task
	e2e.Eventually(t, 60*time.Second, fmt.Sprintf("crawl task %d to finish", id), func() bool {
		status, got := e.get(t, id)
		v = got
		return status == http.StatusOK && (v.Status == crawl.Completed || v.Status == crawl.Failed)
	})
	return v
}

// signals counts the completion signals in the task's workflow history.
func (e *crawlEnv) signals(t *testing.T, id int64) int {
	t.Helper()
	it := e.Platform.Temporal.GetWorkflowHistory(context.Background(), crawlwf.WorkflowID(id), "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			n++
		}
	}
	return n
}

// readTopic returns the records of topic once at least want arrived.
func (e *crawlEnv) readTopic(t *testing.T, topic string, want int) []*kgo.Record {
	t.Helper()
	return testenv.ReadTopic(t, e.Config.Kafka.Brokers, topic, want)
}

type configCrawl = config.Crawl

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// recordHistory records a finished task's workflow history when RECORD_HISTORIES is set.
func (e *crawlEnv) recordHistory(t *testing.T, id int64, name string) {
	t.Helper()
	histories.Record(t, e.Platform.Temporal, "crawl", crawlwf.WorkflowID(id), "", name)
}

// recordsWithResult sums taskloom_crawl_records_total{result} over topics.
func (e *crawlEnv) recordsWithResult(t *testing.T, result string) int {
	t.Helper()
	families, err := e.Platform.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != "taskloom_crawl_records_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(sum)
}

// produce sends recs and waits for every ack. franz-go fills in each record
// it produces (partition, offset, timestamp, …), so a record produced twice
// is a data race in the client; a test that means a copy passes a second
// record with the same content.
func (e *crawlEnv) produce(t *testing.T, recs ...*kgo.Record) {
	t.Helper()
	seen := make(map[*kgo.Record]bool, len(recs))
	for _, r := range recs {
		if seen[r] {
			t.Fatalf("record %s/%s passed twice: produce a second record with the same content", r.Topic, r.Key)
		}
		seen[r] = true
	}
	if err := e.Platform.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// awaitCounted waits until task id's progress hash counts processed distinct
// tweets and duplicates copies.
func (e *crawlEnv) awaitCounted(t *testing.T, id, processed, duplicates int64) {
	t.Helper()
	store := countscript.FromPlatform(e.Platform)
	e2e.Eventually(t, 30*time.Second, fmt.Sprintf("%d tweets and %d copies of task %d counted", processed, duplicates, id), func() bool {
		p, err := store.Get(context.Background(), id)
		return err == nil && p.ProcessedTweets == processed && p.DuplicateTweets == duplicates
	})
}

// failedRunID is the run id crawl_tasks recorded for the task.
func failedRunID(t *testing.T, e *crawlEnv, id int64) string {
	t.Helper()
	rec, err := crawldb.New(e.Platform.Mongo).Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.RunID
}
