package ui_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// consoleQueryBudget is the most MongoDB commands one console page view may send, whatever the
// number of tasks: counts and lists of executions come from Temporal visibility, a task list is
// one count and one page, a task page reads its task, steps and account.
const consoleQueryBudget = 12

// TestConsolePagesStayWithinAQueryBudget renders every console page over 5,000 pipeline tasks of
// one account and 5,000 crawl tasks (inserted directly: the budget is about reading) and counts the MongoDB commands
// each view sends through mongox.WithTally.
func TestConsolePagesStayWithinAQueryBudget(t *testing.T) {
	env := e2e.New(t)
	ctx := env.Context()
	const total, user, feature = 5000, "bulk-user", "bulk-feature"
	store := pipelinedb.New(env.Platform.Mongo)
	if _, err := store.SetQuota(ctx, user, feature, total); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	tasks := make([]any, 0, total)
	var last string
	for i := 0; i < total; i++ {
		id := pipeline.NewTaskID()
		status := []string{pipeline.StatusSuccess, pipeline.StatusFailed, pipeline.StatusProcessing}[i%3]
		task := pipeline.Task{ID: id, UserID: user, FeatureID: feature, Pipeline: "bulk", Version: "1.0.0",
			InputData: map[string]any{"n": i}, Status: status, WorkflowID: pipeline.WorkflowID(id), CreatedAt: now, UpdatedAt: now}
		if i == total-1 {
			task.Plan = pipeline.PlanOf([]pipeline.Step{{Name: "a", Type: pipeline.StepSyncAPI}, {Name: "b", Type: pipeline.StepSyncAPI}})
		}
		tasks = append(tasks, task)
		last = id
	}
	if _, err := env.Platform.Mongo.Collection(pipelinedb.CollTasks).InsertMany(ctx, tasks); err != nil {
		t.Fatal(err)
	}
	crawls := make([]any, 0, total)
	for i := 0; i < total; i++ {
		crawls = append(crawls, crawl.TaskRecord{OriginalTaskID: int64(i + 1), Status: []string{crawl.Running, crawl.Completed, crawl.Failed}[i%3],
			Source: crawl.SourceAPI, ProcessedTweets: int64(i), CreatedAt: now, UpdatedAt: now})
	}
	if _, err := env.Platform.Mongo.Collection(crawldb.TasksCollection).InsertMany(ctx, crawls); err != nil {
		t.Fatal(err)
	}
	if err := store.StartStep(ctx, last, 0, "bulk_vendor", nil); err != nil { // step a ran; b shows from the plan
		t.Fatal(err)
	}
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: "bulk_vendor", BaseURL: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	usr, err := uisession.NewUsers(env.Platform.Mongo).Init(ctx, adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := sessionFor(t, env, usr)

	// The e2e server, with each request's MongoDB commands counted (what e2e.DoCounted does for
	// API-key requests; the UI signs in with a cookie).
	var mu sync.Mutex
	var tally *mongox.Tally
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, tl := mongox.WithTally(r.Context())
		mu.Lock()
		tally = tl
		mu.Unlock()
		env.Echo.ServeHTTP(w, r.WithContext(c))
	}))
	t.Cleanup(srv.Close)

	pages := []string{
		"/ui/console", "/ui/console/entry",
		"/ui/console/pipelines", "/ui/console/pipelines?page=90&status=failed",
		"/ui/console/pipelines?user=" + user + "&pipeline=bulk&page=3",
		"/ui/console/pipelines/" + last,
		"/ui/console/crawl", "/ui/console/crawl?status=Failed&page=20", "/ui/console/webhook",
	}
	for _, path := range pages {
		resp := getPage(t, srv.URL, path, token)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, resp.StatusCode, body)
		}
		mu.Lock()
		cmds := tally.Commands()
		mu.Unlock()
		names := map[string]int{}
		for _, c := range cmds {
			names[c.Name+" "+c.Collection]++
		}
		t.Logf("%-60s %2d commands %v", path, len(cmds), names)
		if len(cmds) > consoleQueryBudget {
			t.Errorf("%s sent %d MongoDB commands over %d tasks, budget %d: %v", path, len(cmds), total, consoleQueryBudget, names)
		}
		if rows := strings.Count(string(body), "<tr data-"); rows > 120 {
			t.Errorf("%s shows %d rows: not bounded", path, rows)
		}
	}

	// A running task shows Redis's live counters, as the consumer's script leaves them: a
	// TASK_INIT of 3, a tweet, a copy of it and a dead letter naming the task.
	const running = 4999 // Running (i%3 == 0) and on the first page
	data, control := env.Config.Crawl.DataTopic, env.Config.Crawl.ControlTopic
	at := func(topic string, offset int64) crawl.Coordinates {
		return crawl.Coordinates{Topic: topic, Offset: offset}
	}
	if _, err := countscript.FromPlatform(env.Platform).ApplyBatch(ctx, []crawl.Update{
		{TaskID: running, Coord: at(control, 0), Init: true, TotalTweets: 3},
		{TaskID: running, Coord: at(data, 0), TweetID: "a"},
		{TaskID: running, Coord: at(data, 1), TweetID: "a"},
		{TaskID: running, Coord: at(data, 2), DeadLetter: true},
	}); err != nil {
		t.Fatal(err)
	}
	resp := getPage(t, srv.URL, "/ui/console/crawl", token)
	body, _ := io.ReadAll(resp.Body)
	_, row, found := strings.Cut(string(body), fmt.Sprintf(`<tr data-task="%d">`, running))
	if !found {
		t.Fatalf("running task %d is not on the crawl page", running)
	}
	row, _, _ = strings.Cut(row, "</tr>")
	for _, want := range []string{`1 / 3 <span class="muted small">实时</span>`, `<td class="duplicates">1</td>`, `<td class="dead-lettered">1</td>`} {
		if !strings.Contains(row, want) {
			t.Errorf("running task's row lacks %s:\n%s", want, row)
		}
	}
}
