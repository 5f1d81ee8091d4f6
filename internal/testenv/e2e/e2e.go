// Package e2e runs the whole application for a test: the full API router in an httptest
// server and a Temporal worker, over the shared dependencies of package testenv. Tests that use
// it live in external test packages (package foo_test), because it imports every subsystem.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/worker"

	sdkworker "go.temporal.io/sdk/worker"
)

// Env is one running application.
type Env struct {
	T        testing.TB
	Config   *config.Config
	Platform *platform.Platform
	// API serves the whole router; its URL is Config.API.PublicURL.
	API  *httptest.Server
	Echo *echo.Echo
	// EchoService is the echo service the API and the worker share, as in a real process.
	EchoService *taskecho.Server
	AdminKey    string
	Worker      sdkworker.Worker
	ctx         context.Context

	tallies sync.Map // tally id (tallyHeader) → *mongox.Tally
}

// Option adjusts the configuration before anything starts.
type Option func(*config.Config)

// OwnNamespace runs the env in a Temporal namespace of its own (testenv.Namespace) rather than
// the dev server's default one, which the package's other tests and earlier -count runs fill:
// for tests that read counts or lists across the namespace (the operations console) and expect
// exact numbers.
func OwnNamespace(t testing.TB) Option {
	t.Helper()
	ns := testenv.Namespace(t)
	return func(c *config.Config) { c.Temporal.Namespace = ns }
}

// New starts the application on fresh storage: its own Mongo database, Redis key prefix and
// Temporal task queue, so tests in one package do not see each other's work.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	return start(t, true, opts...)
}

// NewWithoutWorker is New without the in-process Temporal worker: the test runs its own worker
// processes, and no poller of the test binary ever touches the task queue (one stopped with
// StopWorker still shows among the queue's recent pollers). The background services still run
// in-process; turn off those the test's processes must own (e.g. Crawl.Consumers).
func NewWithoutWorker(t testing.TB, opts ...Option) *Env {
	t.Helper()
	return start(t, false, opts...)
}

func start(t testing.TB, withWorker bool, opts ...Option) *Env {
	t.Helper()
	// The API's listener exists before anything starts, so its URL is the public one: what the
	// worker hands to callers that call back (e.g. the pipelines' SCF callback URL).
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	cfg := config.Defaults()
	cfg.API.PublicURL = "http://" + srv.Listener.Addr().String()
	cfg.Temporal.Address, _ = testenv.Temporal(t)
	cfg.Temporal.Namespace = testenv.TemporalNamespace(t)
	cfg.Temporal.TaskQueue = testenv.Unique("tq-")
	cfg.Mongo.URI = testenv.MongoURI(t)
	cfg.Mongo.Database = testenv.Unique("e2e_")
	cfg.Redis.URL = testenv.RedisURL(t)
	cfg.Redis.KeyPrefix = testenv.Unique("e2e:") + ":"
	cfg.Kafka.Brokers = testenv.Kafka(t)
	cfg.Worker.MetricsAddr = ""
	cfg.API.Addr = "127.0.0.1:0"
	for _, o := range opts {
		o(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("e2e config: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := platform.Open(ctx, cfg, logging.NewTo(io.Discard, "error"))
	if err != nil {
		cancel()
		t.Fatalf("e2e platform: %v", err)
	}
	svc, err := taskechowire.FromPlatform(p)
	if err != nil {
		cancel()
		p.Close()
		t.Fatalf("e2e echo service: %v", err)
	}
	env := &Env{T: t, Config: cfg, Platform: p, EchoService: svc, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = p.Mongo.Drop(ctx)
		p.Close()
	})
	env.AdminKey = env.NewKey(auth.PermAdmin, "")
	if withWorker {
		env.StartWorker()
	}
	go func() { _ = worker.RunServices(ctx, p) }()
	e, err := api.New(ctx, p, svc)
	if err != nil {
		t.Fatalf("e2e api: %v", err)
	}
	srv.Config.Handler = env.tallied(e)
	srv.Start()
	env.Echo, env.API = e, srv
	return env
}

// StartWorker starts a (new) worker on the env's task queue; StopWorker stops it. Together they
// simulate a worker process dying and coming back.
func (e *Env) StartWorker() {
	e.T.Helper()
	w, err := worker.New(e.Platform, e.EchoService)
	if err != nil {
		e.T.Fatalf("e2e worker: %v", err)
	}
	if err := w.Start(); err != nil {
		e.T.Fatalf("e2e worker start: %v", err)
	}
	e.Worker = w
	e.T.Cleanup(func() {
		if e.Worker == w {
			w.Stop()
			e.Worker = nil
		}
	})
}

// StopWorker stops the running worker.
func (e *Env) StopWorker() {
	if e.Worker != nil {
		e.Worker.Stop()
		e.Worker = nil
	}
}

// Context is cancelled when the test ends.
func (e *Env) Context() context.Context { return e.ctx }

// NewKey creates an API key with permission p (bound to project when non-empty).
func (e *Env) NewKey(p auth.Permission, project string) string {
	e.T.Helper()
	_, plain, err := auth.NewStore(e.Platform.Mongo).Create(e.ctx, auth.NewKey{Name: testenv.Unique("key-"), Permission: p, ProjectID: project})
	if err != nil {
		e.T.Fatalf("e2e key: %v", err)
	}
	return plain
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response %d is not JSON: %v\n%s", r.Status, err, r.Body)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends a request with key (none when empty); body may be nil, []byte, string or a value to
// encode as JSON.
func (e *Env) Do(method, path, key string, body any) *Response {
	e.T.Helper()
	return e.do(method, path, key, body, nil)
}

// DoHeader is Do with extra request headers (an Idempotency-Key, a callback's signature, …).
func (e *Env) DoHeader(method, path, key string, body any, header http.Header) *Response {
	e.T.Helper()
	return e.do(method, path, key, body, header)
}

func (e *Env) do(method, path, key string, body any, header http.Header) *Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.T.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.API.URL+path, rd)
	if err != nil {
		e.T.Fatalf("request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// tallyHeader names, on a request sent by DoCounted, the tally that counts its MongoDB commands.
const tallyHeader = "X-Test-Command-Tally"

// tallied lets DoCounted count the MongoDB commands one request issues: the request's context
// carries the tally, and the platform's command monitor adds to it.
func (e *Env) tallied(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t, ok := e.tallies.Load(r.Header.Get(tallyHeader)); ok {
			ctx, inner := mongox.WithTally(r.Context())
			defer func() { t.(*mongox.Tally).Merge(inner) }()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// DoCounted is Do, and also returns the MongoDB commands the API issued while serving the
// request (not those of workflows it started: count those with mongox.WithTally in an activity
// test). Use it to assert an operation's command budget.
func (e *Env) DoCounted(method, path, key string, body any) (*Response, *mongox.Tally) {
	e.T.Helper()
	id := testenv.Unique("tally-")
	t := &mongox.Tally{}
	e.tallies.Store(id, t)
	defer e.tallies.Delete(id)
	return e.do(method, path, key, body, http.Header{tallyHeader: {id}}), t
}

// Eventually polls cond every 100 ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
