package ui_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/api/ui"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/uisession"
)

// maxQueriesPerPage is the fixed budget of database commands one page view may send, whatever
// the number of tasks and projects: every list is paginated and every count is one aggregate.
// The home page is the most expensive: echo.Service.ListProjects counts queues and tasks per
// listed project (2 + 2×20 + the tag list).
const maxQueriesPerPage = 45

// TestPagesMakeABoundedNumberOfQueries renders every page over 5,000 tasks and counts the Mongo
// commands each view sends with a driver command monitor.
func TestPagesMakeABoundedNumberOfQueries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var counting atomic.Bool
	var commands atomic.Int64
	var names commandNames
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if counting.Load() {
			commands.Add(1)
			names.add(e.CommandName)
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(testenv.MongoURI(t)).SetMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}
	db := client.Database(testenv.Unique("uiq_"))
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = client.Disconnect(context.Background()) })

	p, e := mountUI(t, db)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	const project, queue, total = "big", "q-big", 5000
	seedTasks(ctx, t, db, p, project, queue, total)
	cookie := signIn(ctx, t, db)

	pages := []string{
		"/ui/", "/ui/?page=2&q=big",
		"/ui/projects/" + project, "/ui/projects/" + project + "?page=20&pulled=not_pulled",
		"/ui/projects/" + project + "/queues/" + queue, "/ui/projects/" + project + "/queues/" + queue + "?page=40&status=error",
		"/ui/projects/" + project + "/tasks/t-00008?queue=" + queue,
		"/ui/projects/" + project + "/queues/" + queue + "/ops/reset",
		"/ui/pulls",
		// The pull management view of a project: stats over every pull of the project in one
		// streamed query, the pending list capped at 200 rows plus a count, the history lookup.
		"/ui/pulls?project=" + project + "&timeout=0s&task=t-00002&queue=" + queue,
		"/ui/api-keys",
	}
	for _, path := range pages {
		commands.Store(0)
		names.reset()
		counting.Store(true)
		status, body := getWithCookie(t, srv.URL+path, cookie)
		counting.Store(false)
		if status != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, status, body)
		}
		n := commands.Load()
		t.Logf("%-90s %2d commands %v", path, n, names.get())
		if n > maxQueriesPerPage {
			t.Errorf("%s sent %d database commands over %d tasks, budget %d: %v", path, n, total, maxQueriesPerPage, names.get())
		}
		if rows := strings.Count(body, `<tr data-task=`); rows > 200 {
			t.Errorf("%s lists %d task rows: not paginated", path, rows)
		}
		if rows := strings.Count(body, `<tr data-project=`); rows > projectsOnHome {
			t.Errorf("%s lists %d project rows: not paginated", path, rows)
		}
	}
}

// mountUI serves only the UI over db (no Temporal: page views never start workflows).
func mountUI(t *testing.T, db *mongo.Database) (*platform.Platform, *echo.Echo) {
	t.Helper()
	p := &platform.Platform{Config: config.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Mongo: db,
		Metrics: prometheus.NewRegistry()}
	// Mounted without api.New: create the indexes as a start would.
	if err := schema.Ensure(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	svc, err := taskechowire.FromPlatform(p)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	if err := ui.Mount(e, httpx.Deps{Platform: p, Echo: svc}); err != nil {
		t.Fatal(err)
	}
	return p, e
}

// projectsOnHome is the home page's page size (api/ui projectsPerPage).
const projectsOnHome = 20

// seedTasks creates the project and queue as a client push would, then inserts total server
// tasks (half in the queue, half at project level) and pulls some, so that every page has
// pull history and pending leases to show.
func seedTasks(ctx context.Context, t *testing.T, db *mongo.Database, p *platform.Platform, project, queue string, total int) {
	t.Helper()
	svc, err := taskecho.New(taskechodb.New(db), taskecho.SettingsFromConfig(p.Config.Echo), nil, p.Log)
	if err != nil {
		t.Fatal(err)
	}
	// More projects than a home page shows, so that its per-project counts hit the page size.
	for i := 0; i <= projectsOnHome; i++ {
		pid := project
		if i > 0 {
			pid = fmt.Sprintf("%s-%02d", project, i)
		}
		body := fmt.Sprintf(`{"project_id":%q,"project_name":"big","queue_id":%q,"queue_name":"big queue","tasks":[{"id":"c-1","name":"c","prompt":"p","status":"error"}]}`, pid, queue)
		in, err := taskecho.ParseSubmit([]byte(body), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Intake.Submit(ctx, taskecho.Actor{Name: "client"}, in, ""); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	docs := make([]any, 0, total)
	statuses := taskecho.AllStatuses
	for i := 0; i < total; i++ {
		var q *string
		if i%2 == 0 {
			q = &queue
		}
		id := fmt.Sprintf("t-%05d", i)
		docs = append(docs, taskecho.Task{Key: taskecho.TaskKey(project, q, id), ProjectID: project, QueueID: q, TaskID: id,
			Name: "task " + id, Prompt: "prompt", SpecFile: []string{}, Status: statuses[i%len(statuses)], Tags: []string{"bulk"},
			Source: taskecho.SourceServer, CreatedAt: now, UpdatedAt: now, ServerModifiedAt: &now,
			PullHistory: []taskecho.PullEntry{}, Messages: []taskecho.Message{}, Logs: []taskecho.LogEntry{}})
	}
	if _, err := db.Collection(taskechodb.CollTasks).InsertMany(ctx, docs); err != nil {
		t.Fatalf("seed %d tasks: %v", total, err)
	}
	for _, scope := range []*string{nil, &queue, nil} { // the project level's tasks, then the queue's
		if _, err := svc.Leases.Pull(ctx, taskecho.Actor{Name: "puller"}, taskecho.PullFilter{ProjectID: project, QueueID: scope, Limit: 100}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.Collection(taskechodb.CollTasks).CountDocuments(ctx, bson.M{"project_id": project})
	if err != nil || n < int64(total) {
		t.Fatalf("seeded %d tasks (%v)", n, err)
	}
}

// signIn creates the administrator and a session directly in the stores and returns its cookie.
func signIn(ctx context.Context, t *testing.T, db *mongo.Database) *http.Cookie {
	t.Helper()
	usr, err := uisession.NewUsers(db).Init(ctx, adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := uisession.NewSessions(db, time.Hour).Create(ctx, usr)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: "taskloom_session", Value: token}
}

func getWithCookie(t *testing.T, u string, c *http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.AddCookie(c)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// commandNames collects the command names of one page view, for the failure message.
type commandNames struct {
	mu    sync.Mutex
	names map[string]int
}

func (s *commandNames) add(n string) { s.mu.Lock(); s.names[n]++; s.mu.Unlock() }
func (s *commandNames) reset()       { s.mu.Lock(); s.names = map[string]int{}; s.mu.Unlock() }
func (s *commandNames) get() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.names))
	for k, v := range s.names {
		out[k] = v
	}
	return out
}
