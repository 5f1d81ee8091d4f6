//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// echoProject pushes a project with one queue as a TaskEcho client does (on API instance 0),
// then creates n pullable server tasks at project level, alternating the instances.
func echoProject(t testing.TB, n int) (project string, tasks []string) {
	t.Helper()
	project = testenv.Unique("cluster-echo-")
	call(t, request{method: http.MethodPost, url: cl.api(0) + "/api/v1/submit", key: cl.adminKey, body: map[string]any{
		"project_id": project, "project_name": "Cluster", "queue_id": "todo.json", "queue_name": "To do",
		"tasks": []map[string]any{{"id": "client-1", "name": "pushed", "prompt": "p", "status": "pending"}}}}, http.StatusOK)
	for i := range n {
		id := fmt.Sprintf("s-%03d", i)
		if err := expect(request{method: http.MethodPost, url: cl.api(i) + "/api/v1/projects/" + project + "/tasks", key: cl.adminKey,
			body: map[string]any{"taskId": id, "name": "server task", "prompt": "p"}}, http.StatusOK, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, id)
	}
	return project, tasks
}

// pulled is one pull's answer: the tasks handed out and their lease.
type pulled struct {
	Data struct {
		LeaseID string `json:"lease_id"`
		Tasks   []struct {
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	} `json:"data"`
}

// pull is one GET …/tasks/pull on API instance api; ok is false when the instance did not answer
// 200 (the answer is then in a; its zero value when there was none).
func pull(t testing.TB, api int, project string, limit int) (p pulled, a answer, ok bool) {
	t.Helper()
	a, err := try(request{method: http.MethodGet, key: cl.adminKey,
		url: fmt.Sprintf("%s/api/v1/projects/%s/tasks/pull?limit=%d", cl.api(api), project, limit)})
	if err != nil {
		return p, a, false
	}
	if a.Status != http.StatusOK {
		return p, a, false
	}
	a.decode(t, &p)
	return p, a, true
}

// confirm confirms one pulled task on API instance api and returns the status.
func confirm(t testing.TB, api int, project, task, lease string) int {
	t.Helper()
	a, err := try(request{method: http.MethodPost, url: fmt.Sprintf("%s/api/v1/projects/%s/tasks/%s/pull/confirm", cl.api(api), project, task),
		key: cl.adminKey, body: map[string]any{"lease_id": lease}})
	if err != nil {
		return 0
	}
	return a.Status
}

// Push a project, pull its server tasks on one API instance and confirm them on the other:
// each task is handed out once, and a pull after that hands out nothing.
func TestTaskEchoPushPullConfirm(t *testing.T) {
	project, tasks := echoProject(t, 6)
	p, a, ok := pull(t, 1, project, 10)
	if !ok {
		t.Fatalf("pull: %d %s", a.Status, a.Body)
	}
	if len(p.Data.Tasks) != len(tasks) || p.Data.LeaseID == "" {
		t.Fatalf("pull handed out %d tasks (lease %q), want %d", len(p.Data.Tasks), p.Data.LeaseID, len(tasks))
	}
	for _, x := range p.Data.Tasks {
		if s := confirm(t, 0, project, x.TaskID, p.Data.LeaseID); s != http.StatusOK {
			t.Errorf("confirm %s: %d", x.TaskID, s)
		}
	}
	again, a, ok := pull(t, 0, project, 10)
	if !ok || len(again.Data.Tasks) != 0 {
		t.Errorf("a pull after every task was confirmed: %d %s", a.Status, a.Body)
	}
}

// webhookTables opens the Feishu tables the cluster's workers use (the emulator in the fakes
// process), with the settings of cluster.env.
func webhookTables(t testing.TB) (*bitable.Tables, config.Webhook) {
	t.Helper()
	cfg := config.Defaults().Webhook
	for key, field := range map[string]*string{"FEISHU_APP_ID": &cfg.FeishuAppID, "FEISHU_APP_SECRET": &cfg.FeishuAppSecret,
		"FEISHU_BASE_URL": &cfg.FeishuBaseURL, "TASK_BITABLE_URL": &cfg.TaskBitableURL, "WEBHOOK_BITABLE_URL": &cfg.WebhookBitableURL,
		"DRAMA_BITABLE_URL": &cfg.DramaBitableURL, "CAPTURE_BITABLE_URL": &cfg.CaptureBitableURL, "SUMMARY_WEBHOOK_URL": &cfg.SummaryWebhookURL} {
		*field = cl.need(t, key)
	}
	fs, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tables, err := bitable.Open(ctx, fs, webhookwf.TargetFrom(cfg).URLs, webhook.FieldNamesFrom(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return tables, cfg
}

// receivedWith counts the summary receiver's deliveries whose body names s.
func receivedWith(t testing.TB, summaryURL, s string) int {
	t.Helper()
	var got []struct {
		Body any `json:"body"`
	}
	get(t, strings.TrimSuffix(strings.TrimRight(summaryURL, "/"), "/summary")+"/_received", &got)
	n := 0
	for _, d := range got {
		if strings.Contains(fmt.Sprint(d.Body), s) {
			n++
		}
	}
	return n
}

// A result row whose tasks have finished is pushed to the summary webhook by a sweep started
// over HTTP, exactly once: a second sweep, on the other instance, pushes it no more.
func TestWebhookRowDelivered(t *testing.T) {
	tables, cfg := webhookTables(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	group := testenv.Unique("kwai_cluster_")
	day := time.Now().In(time.FixedZone("CST", 8*3600))
	taskID := fmt.Sprint(rand.Int64N(1<<40) + 1)
	if _, err := tables.Client.BatchCreate(ctx, tables.Task, []map[string]any{{tables.F.Task.TaskID: taskID,
		tables.F.Task.Status: webhook.StatusSuccess, tables.F.Task.Scene: "盗版筛查", tables.F.Task.Datetime: day.UnixMilli()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tables.Client.BatchCreate(ctx, tables.Webhook, []map[string]any{{tables.F.Webhook.BizType: webhook.BizPiracyGeneralSearch,
		tables.F.Webhook.Status: "pending", tables.F.Webhook.TaskIDs: webhook.FormatTaskIDs([]string{taskID}),
		tables.F.Webhook.GroupID: group, tables.F.Webhook.Date: day.UnixMilli(), tables.F.Webhook.DramaInfo: "{}"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		call(t, request{method: http.MethodPost, url: cl.api(i) + "/api/v1/webhook/sweeps", key: cl.adminKey,
			body: map[string]any{"group_id": group}}, http.StatusOK)
		eventually(t, time.Minute, "the row of group "+group+" at the summary webhook", func() bool {
			return receivedWith(t, cfg.SummaryWebhookURL, group) > 0
		})
	}
	if n := receivedWith(t, cfg.SummaryWebhookURL, group); n != 1 {
		t.Errorf("the row of group %s was pushed %d times, want once", group, n)
	}
}

// crawlTask is the part of GET /api/v1/crawl-tasks/{id} the tests read.
type crawlTask struct {
	Status          string `json:"status"`
	TotalTweets     *int64 `json:"total_tweets"`
	ProcessedTweets int64  `json:"processed_tweets"`
	FailureReason   string `json:"failure_reason"`
}

// A crawl task started over HTTP runs the crawler command (the fake crawler, producing to the
// cluster's Kafka), and the workers' consumers count every tweet once until it completes; a
// second start on the other instance finds the same task.
func TestCrawlTaskCompletesOverKafka(t *testing.T) {
	id := rand.Int64N(1<<40) + 1_000_000
	call(t, request{method: http.MethodPost, url: cl.api(0) + "/api/v1/crawl-tasks", key: cl.adminKey,
		body: map[string]any{"original_task_id": id}}, http.StatusAccepted)
	var again struct {
		Created bool `json:"created"`
	}
	call(t, request{method: http.MethodPost, url: cl.api(1) + "/api/v1/crawl-tasks", key: cl.adminKey,
		body: map[string]any{"original_task_id": id}}, http.StatusOK).decode(t, &again)
	if again.Created {
		t.Errorf("a second start of crawl task %d created another", id)
	}
	var task crawlTask
	eventually(t, 2*time.Minute, fmt.Sprintf("crawl task %d to complete", id), func() bool {
		a, err := try(request{method: http.MethodGet, url: fmt.Sprintf("%s/api/v1/crawl-tasks/%d", cl.api(1), id), key: cl.adminKey})
		if err != nil || a.Status == http.StatusNotFound {
			return false // its record is written once the workflow has run its first activity
		}
		a.decode(t, &task)
		if task.Status == "Failed" || task.Status == "Terminated" {
			t.Fatalf("crawl task %d: %s (%s)", id, task.Status, task.FailureReason)
		}
		return task.Status == "Completed"
	})
	if task.TotalTweets == nil || *task.TotalTweets == 0 || task.ProcessedTweets != *task.TotalTweets {
		t.Errorf("crawl task %d completed with %d of %v tweets counted", id, task.ProcessedTweets, task.TotalTweets)
	}
}
