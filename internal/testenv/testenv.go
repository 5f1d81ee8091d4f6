// Package testenv gives tests real dependencies: a Temporal dev server started from
// ./.bin/temporal (or the running Temporal that TEST_TEMPORAL_ADDRESS names), an embedded
// FerretDB in its own process, Redis (the machine's real one when reachable, miniredis
// otherwise) and an in-process kfake cluster. Each is started once per test package on first use
// and stopped by Main. It imports no subsystem, so any package's tests
// may use it; the whole application (API + worker) is in package e2e.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/searchattr"
)

var (
	mu       sync.Mutex
	cleanups []func()
)

// Main runs the package's tests and then stops every shared dependency they started.
// Use it as `func TestMain(m *testing.M) { testenv.Main(m) }`. It also records the query
// shapes the stores issue during the tests and fails the package when one is served by none of
// the indexes the stores declared (see checkIndexCoverage).
func Main(m *testing.M) {
	mongox.RecordShapes()
	code := m.Run()
	if code == 0 && !checkIndexCoverage() {
		code = 1
	}
	mu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	mu.Unlock()
	os.Exit(code)
}

func onExit(f func()) {
	mu.Lock()
	defer mu.Unlock()
	cleanups = append(cleanups, f)
}

// shared starts a dependency once per package; a failure is reported to every test that asks.
type shared[T any] struct {
	// process names a dependency that runs as a server process of its own (the Temporal dev
	// server, FerretDB): the integration stack. A test that needs one is skipped under -short,
	// which is how `make check` runs the unit tests alone, fast. The in-process stand-ins
	// (miniredis, kfake) are not skipped.
	process string
	once    sync.Once
	v       T
	err     error
}

func (s *shared[T]) get(t testing.TB, start func() (T, error)) T {
	t.Helper()
	if s.process != "" && testing.Short() {
		t.Skipf("-short: needs %s (the integration stack)", s.process)
	}
	s.once.Do(func() { s.v, s.err = start() })
	if s.err != nil {
		t.Fatalf("testenv: %v", s.err)
	}
	return s.v
}

// RepoRoot is the directory holding go.mod.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Unique returns prefix plus a random suffix, for names that must not collide across tests and
// packages running at the same time.
func Unique(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// temporalTarget is the package's Temporal: a dev server it started, or the external one
// TEST_TEMPORAL_ADDRESS names. ui and metrics are empty where the tests cannot know them.
type temporalTarget struct {
	hostPort, namespace string
	client              client.Client
	ui, metrics         string
}

var temporalServer = shared[temporalTarget]{process: "the Temporal dev server"}

// The variables that point the integration tests at a running Temporal (a cluster such as
// `make cluster`'s) instead of a dev server of their own; see docs/development.md.
const (
	envTemporalAddress   = "TEST_TEMPORAL_ADDRESS"
	envTemporalNamespace = "TEST_TEMPORAL_NAMESPACE"
	envTemporalUI        = "TEST_TEMPORAL_UI_URL"
)

// Temporal returns the package's Temporal frontend address and a client for it (on
// TemporalNamespace).
func Temporal(t testing.TB) (hostPort string, c client.Client) {
	srv := temporalServer.get(t, startTemporal)
	return srv.hostPort, srv.client
}

// TemporalNamespace is the namespace the package's Temporal client uses and the e2e
// application runs in: "default" on the dev server, TEST_TEMPORAL_NAMESPACE (default "default")
// on an external one.
func TemporalNamespace(t testing.TB) string {
	return temporalServer.get(t, startTemporal).namespace
}

// TemporalUI returns the base URL of the package's Temporal Web UI (http://127.0.0.1:port),
// which a browser test opens as an operator would. Against an external Temporal it is
// TEST_TEMPORAL_UI_URL; the test is skipped when that is unset.
func TemporalUI(t testing.TB) string {
	t.Helper()
	return temporalServer.get(t, startTemporal).uiOrSkip(t)
}

func (s temporalTarget) uiOrSkip(t testing.TB) string {
	t.Helper()
	if s.ui == "" {
		t.Skipf("%s is set and %s is not: no Temporal Web UI to open", envTemporalAddress, envTemporalUI)
	}
	return s.ui
}

// TemporalMetrics returns the URL of the package's dev server's Prometheus metrics, where a
// test reads what the server itself did (e.g. its persistence requests). Against an external
// Temporal the test is skipped: its metrics count every client's work, not the test's.
func TemporalMetrics(t testing.TB) string {
	t.Helper()
	return temporalServer.get(t, startTemporal).metricsOrSkip(t)
}

func (s temporalTarget) metricsOrSkip(t testing.TB) string {
	t.Helper()
	if s.metrics == "" {
		t.Skipf("%s is set: the external Temporal's metrics are not the test's alone", envTemporalAddress)
	}
	return s.metrics
}

func startTemporal() (temporalTarget, error) {
	if addr := os.Getenv(envTemporalAddress); addr != "" {
		return dialExternalTemporal(addr, os.Getenv(envTemporalNamespace), os.Getenv(envTemporalUI))
	}
	return startTemporalDev()
}

// dialExternalTemporal connects to a Temporal the tests did not start; namespace defaults to
// "default". It must already exist with taskloom's search attributes (`starter setup` does
// that), as on the dev server, which registers them at start.
func dialExternalTemporal(addr, namespace, ui string) (temporalTarget, error) {
	if namespace == "" {
		namespace = "default"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: namespace, Logger: quietLogger()})
	if err != nil {
		return temporalTarget{}, fmt.Errorf("%s=%s: %w", envTemporalAddress, addr, err)
	}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace}); err != nil {
		c.Close()
		return temporalTarget{}, fmt.Errorf("%s=%s: namespace %q: %w", envTemporalAddress, addr, namespace, err)
	}
	onExit(c.Close)
	return temporalTarget{hostPort: addr, namespace: namespace, client: c, ui: strings.TrimSuffix(ui, "/")}, nil
}

// childOutput is where the servers a test binary starts write. It is not an *os.File, so exec
// copies through a pipe instead of handing them the binary's own stderr: a binary killed by its
// timeout then leaves no child holding the output `go test` waits on, which hung `make test`.
var childOutput io.Writer = io.MultiWriter(os.Stderr)

// startTemporalDev starts the package's own dev server from ./.bin/temporal.
func startTemporalDev() (temporalTarget, error) {
	bin := filepath.Join(RepoRoot(), ".bin", "temporal")
	if _, err := os.Stat(bin); err != nil {
		return temporalTarget{}, fmt.Errorf("%s is missing: run `./temporal-dev.sh --install-only` (make test does)", bin)
	}
	uiPort, err := freePort()
	if err != nil {
		return temporalTarget{}, fmt.Errorf("a port for the Temporal Web UI: %w", err)
	}
	metricsPort, err := freePort()
	if err != nil {
		return temporalTarget{}, fmt.Errorf("a port for the Temporal metrics: %w", err)
	}
	// The frontend's port too: left empty, the SDK picks one by listening on port 0.
	frontend, err := loopback.FreeAddr()
	if err != nil {
		return temporalTarget{}, fmt.Errorf("a port for the Temporal frontend: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  bin,
		ClientOptions: &client.Options{HostPort: frontend, Namespace: "default", Logger: quietLogger()},
		// The Web UI, as `make dev` runs it, so a browser test can look at what an operator sees.
		EnableUI:  true,
		UIPort:    uiPort,
		LogLevel:  "error",
		ExtraArgs: append(devstack.TemporalDevArgs(), "--metrics-port", metricsPort),
		Stdout:    childOutput,
		Stderr:    childOutput,
	})
	if err != nil {
		return temporalTarget{}, fmt.Errorf("start temporal dev server: %w", err)
	}
	onExit(func() { _ = srv.Stop() })
	return temporalTarget{hostPort: srv.FrontendHostPort(), namespace: "default", client: srv.Client(),
		ui: "http://127.0.0.1:" + uiPort, metrics: "http://127.0.0.1:" + metricsPort + "/metrics"}, nil
}

// freePort is a loopback port nothing listens on right now, from outside the ephemeral range
// (loopback.FreeAddr says why).
func freePort() (string, error) {
	addr, err := loopback.FreeAddr()
	if err != nil {
		return "", err
	}
	_, port, err := net.SplitHostPort(addr)
	return port, err
}

// Namespace registers a namespace of its own on the package's dev server, with taskloom's
// search attributes, and returns its name. The dev server's default namespace holds every
// execution the package's tests (and earlier -count runs) started; a test that reads visibility
// across a namespace and expects exact numbers runs in a namespace of its own.
func Namespace(t testing.TB) string {
	t.Helper()
	_, c := Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := Unique("ns-")
	if _, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatalf("register namespace %s: %v", name, err)
	}
	attrs, err := searchattr.Types()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: name, SearchAttributes: attrs}); err != nil {
		t.Fatalf("search attributes of namespace %s: %v", name, err)
	}
	awaitSearchAttributes(ctx, t, c, name)
	return name
}

// awaitSearchAttributes waits until the server answers queries on namespace's search
// attributes. Added search attributes reach the server's caches eventually, as on any cluster:
// the dev server reads them fresh on every use only with the CLI's default, which the harness
// turns off as production runs it (devstack.TemporalDynamicConfig); the namespace's cached
// record learns of them on its next refresh, about 2 s later.
func awaitSearchAttributes(ctx context.Context, t testing.TB, c client.Client, namespace string) {
	t.Helper()
	awaitCount(ctx, t, c, namespace, probeQuery, func(int64) bool { return true })
}

// probeQuery selects the executions started with TaskloomKind "probe" (none but a test's own).
var probeQuery = fmt.Sprintf("%s = 'probe'", searchattr.Kind.GetName())

// awaitCount counts namespace's executions matching query until the server answers a count
// that done accepts, and fails the test when ctx ends first.
func awaitCount(ctx context.Context, t testing.TB, c client.Client, namespace, query string, done func(int64) bool) {
	t.Helper()
	req := &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: query}
	for {
		resp, err := c.WorkflowService().CountWorkflowExecutions(ctx, req)
		if err == nil && done(resp.GetCount()) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("namespace %s: %s counted %d, not yet what the test waits for: %v", namespace, query, resp.GetCount(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var mongoServer = shared[string]{process: "the embedded FerretDB"}

// MongoURI returns the URI of the package's embedded FerretDB.
func MongoURI(t testing.TB) string {
	return mongoServer.get(t, startMongo)
}

// Mongo returns a fresh, empty database that is dropped when the test ends.
func Mongo(t testing.TB) *mongo.Database {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(MongoURI(t)).SetTimeout(30 * time.Second).SetMonitor(mongox.Monitor(nil)))
	if err != nil {
		t.Fatalf("testenv: connect mongo: %v", err)
	}
	db := c.Database(Unique("t_"))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = db.Drop(ctx)
		_ = c.Disconnect(ctx)
	})
	return db
}

// startMongo runs FerretDB as a separate process built without -race (it would run ~8× slower
// inside the race-instrumented test binary). TEST_MONGO_URI points the tests at a real MongoDB.
func startMongo() (string, error) {
	if uri := os.Getenv("TEST_MONGO_URI"); uri != "" {
		return uri, nil
	}
	bin, err := embeddedMongoBinary()
	if err != nil {
		return "", err
	}
	addr, err := loopback.FreeAddr()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "taskloom-ferretdb-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "-addr", addr, "-dir", dir, "-exit-on-stdin-eof")
	cmd.Stderr = childOutput
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	// The child stops when this pipe closes, which the kernel does when this process dies.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	onExit(func() {
		_ = stdin.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = os.RemoveAll(dir)
	})
	line := make([]byte, 256)
	n, err := out.Read(line) // the process prints its URI once it answers pings
	if err != nil {
		return "", fmt.Errorf("embedded mongo did not start: %w", err)
	}
	return strings.TrimSpace(string(line[:n])), nil
}

var buildMu sync.Mutex

// embeddedMongoBinary returns ./.bin/embedded-mongo, building it when it is missing or older
// than a source file it is built from (make test builds it up front; a developer running
// `go test` after changing internal/devstack must not test against the old proxy).
func embeddedMongoBinary() (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	root := RepoRoot()
	bin := filepath.Join(root, ".bin", "embedded-mongo")
	if fresh, err := binaryFresh(root, bin); err != nil {
		return "", err
	} else if fresh {
		return bin, nil
	}
	tmp := bin + ".tmp" + Unique("")
	cmd := exec.Command("go", "build", "-o", tmp, embeddedMongoPkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build embedded-mongo: %v\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}

const embeddedMongoPkg = "./internal/devstack/cmd/embedded-mongo"

// binaryFresh says whether bin exists and is newer than go.mod, go.sum and every Go file of
// the module's own packages it links.
func binaryFresh(root, bin string) (bool, error) {
	st, err := os.Stat(bin)
	if err != nil {
		return false, nil
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", embeddedMongoPkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Errorf("go list %s: %w", embeddedMongoPkg, err)
	}
	sources := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for _, dir := range strings.Fields(string(out)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		sources = append(sources, files...)
	}
	for _, f := range sources {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(st.ModTime()) {
			return false, nil
		}
	}
	return true, nil
}

var redisServer shared[string]

// RedisURL returns the machine's Redis (REDIS_URL, or 127.0.0.1:6379 when it answers) and
// falls back to an in-process miniredis.
func RedisURL(t testing.TB) string {
	return redisServer.get(t, startRedis)
}

func startRedis() (string, error) {
	candidates := []string{os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0"}
	for _, u := range candidates {
		if u == "" {
			continue
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			return "", fmt.Errorf("REDIS_URL: %w", err)
		}
		c := redis.NewClient(opt)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = c.Ping(ctx).Err()
		cancel()
		_ = c.Close()
		if err == nil {
			return u, nil
		}
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		return "", fmt.Errorf("miniredis: %w", err)
	}
	onExit(mr.Close)
	return "redis://" + mr.Addr(), nil
}

// Redis returns a client and a key prefix unique to the test; keys under the prefix are
// deleted when the test ends.
func Redis(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	opt, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	c := redis.NewClient(opt)
	prefix := Unique("t:") + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = devstack.RemoveKeys(ctx, c, prefix)
		_ = c.Close()
	})
	return c, prefix
}

var kafkaCluster shared[[]string]

// Kafka returns the brokers of the package's kfake cluster (devstack.Topics pre-created,
// other topics auto-created).
func Kafka(t testing.TB) []string {
	return kafkaCluster.get(t, func() ([]string, error) {
		c, err := devstack.StartKafka(0)
		if err != nil {
			return nil, err
		}
		onExit(c.Close)
		return c.ListenAddrs(), nil
	})
}

// Go runs run in a goroutine with a context that the returned stop cancels; stop waits for run
// to return and fails the test if it returned an error. It also runs when the test ends, so a
// background consumer or server never outlives its test.
func Go(t testing.TB, run func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("background run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
