package crawl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawlkafka"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/waiting"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

func TestCrawlNormalOrderCompletes(t *testing.T) {
	e := newCrawlEnv(t, fakeCrawler("--tweets 30 --replies 2"))
	id := taskID()
	e.create(t, id)
	v := e.finished(t, id)
	if v.Status != crawl.Completed || v.TotalTweets == nil || *v.TotalTweets != 30 || v.ProcessedTweets != 30 ||
		v.Source != crawl.SourceAPI || v.WorkflowID != crawlwf.WorkflowID(id) || v.FinishedAt == nil {
		t.Fatalf("task = %+v", v)
	}
	if v.Crawler == nil || v.Crawler.ExitCode != 0 || len(v.Crawler.LastLines) == 0 ||
		!strings.Contains(v.Crawler.LastLines[len(v.Crawler.LastLines)-1], "sent TASK_INIT total_tweets=30") {
		t.Fatalf("crawler record = %+v", v.Crawler)
	}
	if n := e.signals(t, id); n != 1 {
		t.Fatalf("completion signals = %d, want 1", n)
	}
	e.recordHistory(t, id, "normal_order_lowercase_status")
	// Every reply reached the scheduler topic before its tweet was counted.
	if got := e.readTopic(t, e.Config.Crawl.SchedulerTopic, 60); len(got) != 60 {
		t.Fatalf("reply tasks = %d, want 60", len(got))
	}
	desc, err := e.Platform.Temporal.DescribeWorkflow(context.Background(), crawlwf.WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	sa := desc.TypedSearchAttributes
	if status, _ := sa.GetKeyword(searchattr.Status); status != crawl.SearchStatus(crawl.Completed) {
		t.Fatalf("TaskloomStatus = %q", status)
	}
	if kind, _ := sa.GetKeyword(searchattr.Kind); kind != crawlwf.Kind {
		t.Fatalf("TaskloomKind = %q", kind)
	}
	if got, _ := sa.GetInt64(searchattr.OriginalTaskID); got != id {
		t.Fatalf("OriginalTaskId = %d", got)
	}
}

func TestCrawlTaskInitLastCompletes(t *testing.T) {
	e := newCrawlEnv(t, fakeCrawler("--tweets 25 --init-last"))
	id := taskID()
	e.create(t, id)
	if v := e.finished(t, id); v.Status != crawl.Completed || v.ProcessedTweets != 25 || *v.TotalTweets != 25 {
		t.Fatalf("task = %+v", v)
	}
	e.recordHistory(t, id, "task_init_last")
	if n := e.signals(t, id); n != 1 {
		t.Fatalf("completion signals = %d, want 1", n)
	}
}

func TestCrawlZeroTweetsCompletes(t *testing.T) {
	e := newCrawlEnv(t, fakeCrawler("--tweets 0"))
	id := taskID()
	e.create(t, id)
	if v := e.finished(t, id); v.Status != crawl.Completed || v.TotalTweets == nil || *v.TotalTweets != 0 {
		t.Fatalf("task = %+v", v)
	}
	e.recordHistory(t, id, "zero_tweets")
}

// The fake crawler sends a quarter of its tweets twice (same id): the copies
// are not counted and GET reports them.
func TestCrawlCopiesNotCounted(t *testing.T) {
	e := newCrawlEnv(t, fakeCrawler("--tweets 40 --dup-rate 0.25 --seed 3"))
	id := taskID()
	e.create(t, id)
	v := e.finished(t, id)
	if v.Status != crawl.Completed || *v.TotalTweets != 40 || v.ProcessedTweets != 40 {
		t.Fatalf("task = %+v, want 40 distinct tweets counted once", v)
	}
	e2e.Eventually(t, 20*time.Second, "every copy reported", func() bool {
		_, got := e.get(t, id)
		return got.DuplicateTweets > 0 && int(got.DuplicateTweets) == e.recordsWithResult(t, "duplicate")
	})
}

// A crawler whose total_tweets counted its copies: the task cannot reach
// the total and fails at the deadline, saying how many distinct tweets and
// copies arrived; the Redis hash says FAILED. The deadline runs from the
// TASK_INIT, so it is sent once every tweet and copy is counted: the reason
// then names all of them however slowly the consumer ran.
func TestCrawlTotalCountingCopiesFailsWithReason(t *testing.T) {
	e := newCrawlEnv(t, deadline(2*time.Second))
	id := taskID()
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 5, RepliesPerTweet: 1}
	_, data := f.Messages()
	recs := []*kgo.Record{}
	for _, m := range data {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		// A copy is a second record with the same content, as a retrying
		// producer sends it: franz-go writes into every record it produces, so
		// one *kgo.Record must never be produced twice.
		for range 2 {
			recs = append(recs, &kgo.Record{Topic: crawl.DataTopicDefault, Key: []byte(m.TweetData.ID), Value: b})
		}
	}
	e.produce(t, recs...)
	e.awaitCounted(t, id, 5, 5)
	initValue, err := json.Marshal(crawl.TaskControlMessage{Type: crawl.TypeTaskInit, OriginalTaskID: id, TotalTweets: 10})
	if err != nil {
		t.Fatal(err)
	}
	e.produce(t, &kgo.Record{Topic: crawl.ControlTopicDefault, Key: []byte(itoa(id)), Value: initValue})
	v := e.finished(t, id)
	want := "completion deadline 2s passed: 5 of 10 tweets missing; 5 distinct tweets arrived and 5 copies of them " +
		"were not counted, so total_tweets may include duplicates"
	if v.Status != crawl.Failed || v.FailureReason != want || v.ProcessedTweets != 5 || v.DuplicateTweets != 5 ||
		v.MissingTweets == nil || *v.MissingTweets != 5 {
		t.Fatalf("task = %+v", v)
	}
	p, err := countscript.FromPlatform(e.Platform).Get(context.Background(), id)
	if err != nil || p.Status != crawl.ProgressFailed {
		t.Fatalf("progress = %+v, %v; want FAILED", p, err)
	}
	e.recordHistory(t, id, "deadline_total_counts_copies")
}

func TestCrawlCrawlerExitNonZeroFails(t *testing.T) {
	e := newCrawlEnv(t, func(c *configCrawl) {
		c.CrawlerCommand = `sh -c 'echo crawling task {id}; echo login wall hit >&2; exit 3'`
	})
	id := taskID()
	e.create(t, id)
	v := e.finished(t, id)
	if v.Status != crawl.Failed || v.FailureReason != "crawler exited with status 3: login wall hit" {
		t.Fatalf("task = %+v", v)
	}
	if v.Crawler == nil || v.Crawler.ExitCode != 3 || strings.Join(v.Crawler.LastLines, "|") != "crawling task "+itoa(id)+"|login wall hit" {
		t.Fatalf("crawler record = %+v", v.Crawler)
	}
	e.recordHistory(t, id, "crawler_exit_nonzero")
}

func TestCrawlDeadlineFailsWithMissingCount(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	e := newCrawlEnv(t, fakeCrawler("--tweets 20 --drop 4 --hold-until "+release), deadline(3*time.Second))
	id := taskID()
	e.create(t, id)
	// The completion deadline runs from the crawler's exit, so while the
	// crawler is held the task is Running with live counts from Redis
	// however long the crawler took to start and send.
	e2e.Eventually(t, 60*time.Second, "live progress", func() bool {
		status, v := e.get(t, id)
		if status == http.StatusOK && v.Status != crawl.Running {
			t.Fatalf("task finished while its crawler runs: %+v", v)
		}
		return status == http.StatusOK && v.TotalTweets != nil &&
			*v.TotalTweets == 20 && v.ProcessedTweets == 16 && v.MissingTweets == nil
	})
	// What the execution shows while the crawler runs (docs/operations.md "What each execution shows").
	if _, v := e.get(t, id); v.WaitingFor == nil || v.WaitingFor.Reason != waiting.Crawler || v.WaitingFor.Until == nil {
		t.Fatalf("waiting_for while the crawler runs = %+v", v.WaitingFor)
	}
	wfID := crawlwf.WorkflowID(id)
	ex := e.Explain(wfID)
	if want := fmt.Sprintf("crawl task %d · source api · completion deadline 3s", id); ex.Summary != want {
		t.Errorf("static summary = %q, want %q", ex.Summary, want)
	}
	if !strings.Contains(ex.Details, fmt.Sprintf("GET /api/v1/crawl-tasks/%d", id)) || !strings.HasPrefix(ex.Current, "crawling: the crawler runs since ") {
		t.Errorf("details %q, current details %q", ex.Details, ex.Current)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v := e.finished(t, id)
	if v.WaitingFor != nil {
		t.Errorf("a finished task waits for %+v", v.WaitingFor)
	}
	if cur := e.Explain(wfID).Current; !strings.HasPrefix(cur, "Failed: 16 of 20 tweets processed; completion deadline") {
		t.Errorf("current details once failed = %q", cur)
	}
	if v.Status != crawl.Failed || v.MissingTweets == nil || *v.MissingTweets != 4 || v.ProcessedTweets != 16 ||
		!strings.Contains(v.FailureReason, "4 of 20 tweets missing") {
		t.Fatalf("task = %+v", v)
	}
	e.recordHistory(t, id, "deadline_missing")
}

// The crawler ran outside taskloom; the first consumer counts everything and
// signals, then dies before any offset commit lands; the second gets every
// record again. The task completes once, with one signal.
func TestCrawlRedeliveredRecordsCountOnce(t *testing.T) {
	e := newCrawlEnv(t, noConsumers())
	id := taskID()
	e.failCommit.Store(true)
	stop := e.startConsumer(t)
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 50, RepliesPerTweet: 1, InitLast: true}
	if _, err := f.Produce(context.Background(), e.Platform.Kafka, crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault}); err != nil {
		t.Fatal(err)
	}
	v := e.finished(t, id)
	stop()
	e.failCommit.Store(false)
	e.startConsumer(t)
	// The second member handed every reply over again: all 50 records were
	// delivered twice.
	if got := e.readTopic(t, e.Config.Crawl.SchedulerTopic, 100); len(got) != 100 {
		t.Fatalf("reply tasks = %d, want 100", len(got))
	}
	// Replies are handed over before counting: wait until the second member
	// has run every record (50 tweets and the TASK_INIT) through the script.
	e2e.Eventually(t, 20*time.Second, "51 duplicates", func() bool { return e.recordsWithResult(t, "duplicate") == 51 })
	if v.Status != crawl.Completed || v.Source != crawl.SourceKafka || v.ProcessedTweets != 50 {
		t.Fatalf("task = %+v", v)
	}
	p, err := countscript.FromPlatform(e.Platform).Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if p.ProcessedTweets != 50 || p.TotalTweets != 50 || p.Status != crawl.ProgressCompleted {
		t.Fatalf("progress after redelivery = %+v", p)
	}
	if n := e.signals(t, id); n != 1 {
		t.Fatalf("completion signals = %d, want 1", n)
	}
	e.recordHistory(t, id, "started_by_consumer_redelivered")
}

// A crawler run outside taskloom that loses tweets: its TASK_INIT starts the
// workflow, which fails at the deadline with the missing count.
func TestCrawlExternalTaskWithLostTweetsFails(t *testing.T) {
	e := newCrawlEnv(t, deadline(2*time.Second))
	id := taskID()
	// TASK_INIT last, once the tweets that came are counted: the deadline
	// runs from it, and the failure must name exactly the two lost ones.
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 12, RepliesPerTweet: 1, Drop: 2, InitLast: true}
	recs, err := f.Records(crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault})
	if err != nil {
		t.Fatal(err)
	}
	e.produce(t, recs[:len(recs)-1]...)
	e.awaitCounted(t, id, 10, 0)
	e.produce(t, recs[len(recs)-1])
	v := e.finished(t, id)
	if v.Status != crawl.Failed || v.Source != crawl.SourceKafka || v.MissingTweets == nil || *v.MissingTweets != 2 ||
		v.ProcessedTweets != 10 || v.Crawler != nil {
		t.Fatalf("task = %+v", v)
	}
	e.recordHistory(t, id, "started_by_task_init_deadline")
}

// The lost tweets turn up after the task failed at its deadline: Redis
// counts them but the hash stays FAILED (no completion, no signal), no new
// run starts and the partition keeps moving.
func TestCrawlLateTweetsAfterDeadlineAreIgnored(t *testing.T) {
	e := newCrawlEnv(t, deadline(2*time.Second))
	topics := crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault}
	id := taskID()
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 6, RepliesPerTweet: 1, Drop: 2}
	if _, err := f.Produce(context.Background(), e.Platform.Kafka, topics); err != nil {
		t.Fatal(err)
	}
	failed := e.finished(t, id)
	if failed.Status != crawl.Failed {
		t.Fatalf("task = %+v", failed)
	}
	f.Drop = 0
	_, all := f.Messages()
	for _, m := range all[4:] {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		e.produce(t, &kgo.Record{Topic: topics.Data, Key: []byte(m.TweetData.ID), Value: b})
	}
	store := countscript.FromPlatform(e.Platform)
	e2e.Eventually(t, 20*time.Second, "late tweets counted in Redis", func() bool {
		p, err := store.Get(context.Background(), id)
		return err == nil && p.ProcessedTweets == 6
	})
	if p, err := store.Get(context.Background(), id); err != nil || p.Status != crawl.ProgressFailed {
		t.Fatalf("progress = %+v, %v; want FAILED", p, err)
	}
	// The partitions still move: a later task completes.
	next := crawler.Crawl{OriginalTaskID: taskID(), Tweets: 8, RepliesPerTweet: 1}
	if _, err := next.Produce(context.Background(), e.Platform.Kafka, topics); err != nil {
		t.Fatal(err)
	}
	if v := e.finished(t, next.OriginalTaskID); v.Status != crawl.Completed {
		t.Fatalf("next task = %+v", v)
	}
	if _, v := e.get(t, id); v.Status != crawl.Failed || v.FinishedAt == nil || *v.FinishedAt != *failed.FinishedAt {
		t.Fatalf("failed task changed: %+v", v)
	}
	desc, err := e.Platform.Temporal.DescribeWorkflow(context.Background(), crawlwf.WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.WorkflowExecution.RunID != failedRunID(t, e, id) || desc.Status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("latest run %s (%s): a new run of the failed task's workflow was started", desc.WorkflowExecution.RunID, desc.Status)
	}
}

// Crawl bookkeeping per event costs at most 2 MongoDB commands. Counting is Redis only and the consumer writes nothing to Mongo
// (crawl_tasks is written by the task's workflow, once per task), so the
// consumer's commands stay at 0 however many records it handles.
func TestCrawlConsumerBookkeepingMongoBudget(t *testing.T) {
	e := newCrawlEnv(t, noConsumers())
	_, tally := e.startTalliedConsumer(t)
	id := taskID()
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 40, DupRate: 0.25, RepliesPerTweet: 1, Seed: 5}
	sent, err := f.Produce(context.Background(), e.Platform.Kafka, crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault})
	if err != nil {
		t.Fatal(err)
	}
	if v := e.finished(t, id); v.Status != crawl.Completed || v.ProcessedTweets != 40 {
		t.Fatalf("task = %+v", v)
	}
	events := int(sent) + 1
	e2e.Eventually(t, 20*time.Second, "every record through the script", func() bool {
		return e.recordsWithResult(t, "counted")+e.recordsWithResult(t, "duplicate")+e.recordsWithResult(t, "initialized") >= events
	})
	if n := tally.Total(); n != 0 {
		t.Fatalf("consumer issued %s for %d records, want none (budget: 2 per event)", tally, events)
	}
}

func TestCrawlMalformedGoesToDeadLetter(t *testing.T) {
	e := newCrawlEnv(t, noConsumers())
	e.startConsumer(t)
	id := taskID()
	bad := []*kgo.Record{
		{Topic: crawl.DataTopicDefault, Value: []byte(`{"original_task_id": 1, "tweet_data": `)},
		{Topic: crawl.ControlTopicDefault, Value: []byte(`{"type":"TASK_START","original_task_id":1,"total_tweets":3}`)},
		// A poison record that names the task: dead-lettered and counted against it.
		{Topic: crawl.DataTopicDefault, Value: []byte(`{"original_task_id": ` + itoa(id) + `, "tweet_data": `)},
	}
	if err := e.Platform.Kafka.ProduceSync(context.Background(), bad...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f := crawler.Crawl{OriginalTaskID: id, Tweets: 10, RepliesPerTweet: 1}
	if _, err := f.Produce(context.Background(), e.Platform.Kafka, crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault}); err != nil {
		t.Fatal(err)
	}
	if v := e.finished(t, id); v.Status != crawl.Completed || v.ProcessedTweets != 10 {
		t.Fatalf("task = %+v", v)
	}
	// Kafka does not order the poison record against the task's own records, so its count may
	// land after the completion.
	e2e.Eventually(t, 30*time.Second, "the poison record to be counted against the task", func() bool {
		_, v := e.get(t, id)
		return v.DeadLettered == 1
	})
	letters := e.readTopic(t, e.Config.Crawl.DeadLetterTopic, 3)
	reasons := map[string]string{}
	for _, l := range letters {
		reasons[crawlkafka.HeaderValue(l, crawlkafka.HeaderDLQTopic)] = crawlkafka.HeaderValue(l, crawlkafka.HeaderDLQReason)
	}
	if !strings.Contains(reasons[crawl.DataTopicDefault], "decode RawScrapedDataMessage") ||
		!strings.Contains(reasons[crawl.ControlTopicDefault], `type "TASK_START" is not TASK_INIT`) {
		t.Fatalf("dead-letter reasons = %v", reasons)
	}
}

func TestCrawlAPIErrors(t *testing.T) {
	e := newCrawlEnv(t, fakeCrawler("--tweets 1"))
	cases := []struct {
		method, path, key string
		body              any
		status            int
		code              string
	}{
		{http.MethodPost, "/api/v1/crawl-tasks", e.AdminKey, `{"original_task_id": "x"}`, 400, "VALIDATION_ERROR"},
		{http.MethodPost, "/api/v1/crawl-tasks", e.AdminKey, `{"original_task_id": 0}`, 400, "VALIDATION_ERROR"},
		{http.MethodPost, "/api/v1/crawl-tasks", e.AdminKey, `not json`, 400, "VALIDATION_ERROR"},
		{http.MethodPost, "/api/v1/crawl-tasks", "", `{"original_task_id": 1}`, 401, "INVALID_API_KEY"},
		{http.MethodGet, "/api/v1/crawl-tasks/abc", e.AdminKey, nil, 400, "VALIDATION_ERROR"},
		{http.MethodGet, "/api/v1/crawl-tasks/" + itoa(taskID()), e.AdminKey, nil, 404, "RESOURCE_NOT_FOUND"},
	}
	for _, c := range cases {
		r := e.Do(c.method, c.path, c.key, c.body)
		var body struct {
			Success bool `json:"success"`
			Error   struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		r.JSON(t, &body)
		if r.Status != c.status || body.Error.Code != c.code || body.Success {
			t.Errorf("%s %s %v: %d %s", c.method, c.path, c.body, r.Status, r.Body)
		}
	}
	readKey := e.NewKey("read", "")
	if r := e.Do(http.MethodPost, "/api/v1/crawl-tasks", readKey, `{"original_task_id": 5}`); r.Status != http.StatusForbidden {
		t.Errorf("POST with a read key = %d", r.Status)
	}
	// A second POST of the same task finds the first (a double click).
	id := taskID()
	e.create(t, id)
	r := e.Do(http.MethodPost, "/api/v1/crawl-tasks", e.AdminKey, map[string]any{"original_task_id": id})
	var again struct {
		WorkflowID string `json:"workflow_id"`
		Created    bool   `json:"created"`
	}
	r.JSON(t, &again)
	if r.Status != http.StatusOK || again.Created || again.WorkflowID != crawlwf.WorkflowID(id) {
		t.Fatalf("second POST = %d %s", r.Status, r.Body)
	}
	e.finished(t, id)
}
