package testenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.temporal.io/api/operatorservice/v1"

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
	resp, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
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
	want, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
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
