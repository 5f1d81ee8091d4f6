package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/promread"
	"github.com/taskloom/taskloom/internal/searchattr"
)

func TestMain(m *testing.M) { Main(m) }

func TestDependenciesAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db := Mongo(t)
	if _, err := db.Collection("c").InsertOne(ctx, bson.M{"_id": "x", "v": 1}); err != nil {
		t.Fatalf("mongo insert: %v", err)
	}
	if n, err := db.Collection("c").CountDocuments(ctx, bson.M{}); err != nil || n != 1 {
		t.Fatalf("mongo count = %d, %v; want 1", n, err)
	}

	rc, prefix := Redis(t)
	if err := rc.Set(ctx, prefix+"k", "v", 0).Err(); err != nil {
		t.Fatalf("redis set: %v", err)
	}
	if v, _ := rc.Get(ctx, prefix+"k").Result(); v != "v" {
		t.Fatalf("redis get = %q", v)
	}

	_, tc := Temporal(t)
	resp, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: TemporalNamespace(t)})
	if err != nil {
		t.Fatalf("temporal: %v", err)
	}
	if _, ok := resp.GetCustomAttributes()["TaskloomKind"]; !ok {
		t.Fatalf("search attribute TaskloomKind not registered: %v", resp.GetCustomAttributes())
	}

	kc, err := kgo.NewClient(kgo.SeedBrokers(Kafka(t)...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if err := kc.ProduceSync(ctx, &kgo.Record{Topic: Unique("t"), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("kafka produce: %v", err)
	}
}

// A binary older than any source of the embedded database is rebuilt, so `go test` after a
// change to internal/devstack never runs against the old proxy.
func TestEmbeddedMongoBinaryIsStaleWhenOlderThanItsSources(t *testing.T) {
	root := RepoRoot()
	bin := filepath.Join(t.TempDir(), "embedded-mongo")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if fresh, err := binaryFresh(root, bin); err != nil || !fresh {
		t.Fatalf("a binary written now: fresh = %v, %v; want true", fresh, err)
	}
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(bin, old, old); err != nil {
		t.Fatal(err)
	}
	if fresh, err := binaryFresh(root, bin); err != nil || fresh {
		t.Fatalf("a binary from 2000: fresh = %v, %v; want false", fresh, err)
	}
	if fresh, _ := binaryFresh(root, filepath.Join(t.TempDir(), "missing")); fresh {
		t.Fatal("a missing binary is not fresh")
	}
}

// A namespace of its own knows every search attribute the default one does, with its type.
func TestNamespaceHasTheSearchAttributes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, tc := Temporal(t)
	want, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: TemporalNamespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	ns := Namespace(t)
	got, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetCustomAttributes()) != len(searchattr.Registered) {
		t.Fatalf("namespace %s has %v, want the %d of %v", ns, got.GetCustomAttributes(), len(searchattr.Registered), searchattr.Registered)
	}
	for name, typ := range got.GetCustomAttributes() {
		if want.GetCustomAttributes()[name] != typ {
			t.Errorf("%s is %v in %s, %v in default", name, typ, ns, want.GetCustomAttributes()[name])
		}
	}
}

// The harness's server keeps search attributes in its cache, as a production server does:
// system.forceSearchAttributesCacheRefreshOnRead is off by default, and the server documents it as
// "used to facilitate testing of changes in search attributes. This should not be turned on in
// production" (go.temporal.io/server common/dynamicconfig/constants.go). The CLI's dev server turns
// it on; then every start, upsert or version marker that carries search attributes reads the
// cluster metadata from the database again, a cost the stand-in would charge and no cluster does.
func TestSearchAttributesAreReadFromTheServersCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, tc := Temporal(t)
	ns := Namespace(t)
	c, err := client.NewClientFromExisting(tc, client.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	before := clusterMetadataReads(ctx, t)
	const starts = 10
	for i := range starts {
		// No worker polls the queue: the start alone validates and indexes the attributes.
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: Unique("sa-cache-"), TaskQueue: Unique("nobody-"),
			TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet("probe"),
				searchattr.Status.ValueSet("pending"), searchattr.PipelineName.ValueSet(fmt.Sprint(i)))}, "Probe")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.TerminateWorkflow(context.Background(), run.GetID(), run.GetRunID(), "test over") }()
	}
	// The visibility records are written after the starts: wait until all are indexed.
	awaitCount(ctx, t, tc, ns, probeQuery, func(n int64) bool { return n == starts })
	// Each start's attributes read the metadata three times with the CLI's default (measured on
	// the pinned server); from the cache, at most a refresh falls in the window.
	if got := clusterMetadataReads(ctx, t) - before; got >= starts {
		t.Fatalf("%d starts with 3 search attributes each read the cluster metadata %v times; want it served from the cache", starts, got)
	}
}

// Activities are handed to the worker in its workflow task's completion (eager activity
// execution): the server's system.enableActivityEagerExecution is off by default
// (go.temporal.io/server common/dynamicconfig/constants.go) and the SDK asks for it on every
// activity it can take at once (worker.Options.DisableEagerActivities, false by default). With it
// off the activity goes through the task queue: another persistence round and a poll more per
// activity. The server counts each eager dispatch (activity_eager_execution, recorded in
// service/history/api/respondworkflowtaskcompleted).
func TestActivitiesAreDispatchedEagerly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, tc := Temporal(t)
	queue := Unique("eager-")
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
		return workflow.ExecuteActivity(ctx, "Noop").Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "EagerProbe"})
	w.RegisterActivityWithOptions(func(context.Context) error { return nil }, activity.RegisterOptions{Name: "Noop"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	before := serverCounter(ctx, t, "activity_eager_execution", nil)
	const runs = 3
	for range runs {
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: Unique("eager-"), TaskQueue: queue}, "EagerProbe")
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The server publishes its counters once a second; tests running beside this one can only
	// add to the counter.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := serverCounter(ctx, t, "activity_eager_execution", nil) - before
		if got >= runs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d activities, %v dispatched eagerly; want every one (system.enableActivityEagerExecution=true)", runs, got)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// clusterMetadataReads is how many times the dev server read its cluster metadata (where search
// attributes are kept) from its database so far. The server publishes its counters once a
// second, so it first waits for what came before to be published.
func clusterMetadataReads(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	return serverCounter(ctx, t, "persistence_requests", map[string]string{"operation": "GetCurrentClusterMetadata"})
}

// serverCounter is the dev server's counter name as last published, summed over its series that
// carry every label in labels.
func serverCounter(ctx context.Context, t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := promread.Scrape(ctx, TemporalMetrics(t))
	if err != nil {
		t.Fatal(err)
	}
	return promread.Sum(fams[name], labels)
}

// TEST_TEMPORAL_ADDRESS: the package's own dev server stands in for an external Temporal (a
// cluster); dialled as one, the target answers on the namespace asked for, and the tests that
// need what only a server of the tests' own has (its Web UI unless TEST_TEMPORAL_UI_URL is set,
// its metrics) are skipped rather than pointed at nothing.
func TestExternalTemporalIsDialledNotStarted(t *testing.T) {
	addr, _ := Temporal(t)
	ns := Namespace(t)
	ext, err := dialExternalTemporal(addr, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	if ext.hostPort != addr || ext.namespace != ns || ext.client == nil {
		t.Fatalf("external target %+v, want %s on namespace %s", ext, addr, ns)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ext.client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns}); err != nil {
		t.Fatalf("the external client does not answer on %s: %v", ns, err)
	}
	for name, use := range map[string]func(testing.TB) string{"ui": ext.uiOrSkip, "metrics": ext.metricsOrSkip} {
		var sub *testing.T
		t.Run(name, func(t *testing.T) { sub = t; use(t) })
		if !sub.Skipped() {
			t.Errorf("%s of an external Temporal: not skipped", name)
		}
	}
	withUI, err := dialExternalTemporal(addr, "", "http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	if withUI.namespace != "default" || withUI.uiOrSkip(t) != "http://127.0.0.1:1" {
		t.Errorf("defaults: namespace %q, ui %q; want default and TEST_TEMPORAL_UI_URL", withUI.namespace, withUI.ui)
	}
	if _, err := dialExternalTemporal(addr, Unique("missing-"), ""); err == nil || !strings.Contains(err.Error(), envTemporalAddress) {
		t.Errorf("an unknown namespace: %v, want an error naming %s", err, envTemporalAddress)
	}
}
