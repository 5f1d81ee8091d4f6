package schema

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// One step creates every store's indexes, and running it again changes nothing.
func TestEnsureCreatesEveryStoresIndexesOnce(t *testing.T) {
	db := testenv.Mongo(t)
	ctx := context.Background()
	for range 2 {
		if err := Ensure(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	for coll, index := range map[string]string{
		"api_keys":              "",
		entrydb.CollRuns:        "",
		pipelinedb.CollQuotas:   "",
		taskechodb.CollTasks:    "key_unique",
		taskechodb.CollProjects: "project_id_unique",
		"ui_users":              "",
		"ui_sessions":           "",
	} {
		specs, err := db.Collection(coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, s := range specs {
			names[s.Name] = true
		}
		if len(specs) < 2 || (index != "" && !names[index]) {
			t.Errorf("%s has indexes %v, want its store's (%q among them)", coll, names, index)
		}
	}
}

// A database that does not answer fails the step with every store named, so the operator
// reading /readyz knows what is missing.
func TestEnsureNamesEveryStoreThatFailed(t *testing.T) {
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:1/").SetServerSelectionTimeout(100 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	err = Ensure(context.Background(), c.Database("down"))
	if err == nil {
		t.Fatal("Ensure on a database that does not answer succeeded")
	}
	for _, s := range stores(c.Database("down")) {
		if !strings.Contains(err.Error(), s.name+" indexes") {
			t.Errorf("the error does not name %q: %v", s.name, err)
		}
	}
}

// The start policy: a failure is reported by the readiness check and retried in the background
// until the indexes exist; then the check passes.
func TestKeepRetriesUntilTheIndexesExist(t *testing.T) {
	var calls atomic.Int32
	down := errors.New("connection refused")
	ensure := func(context.Context) error {
		if calls.Add(1) < 3 {
			return down
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	check := keep(ctx, ensure, 5*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := check(ctx); !errors.Is(err, down) {
		t.Fatalf("check after a failed first attempt = %v, want the failure", err)
	}
	for deadline := time.Now().Add(10 * time.Second); check(ctx) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still failing after %d attempts: %v", calls.Load(), check(ctx))
		}
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d attempts, want 3 (no more once it succeeded)", n)
	}
}

// A step that succeeds at once starts nothing in the background.
func TestKeepSucceedingAtOnceRetriesNothing(t *testing.T) {
	var calls atomic.Int32
	check := keep(context.Background(), func(context.Context) error { calls.Add(1); return nil }, time.Millisecond, slog.Default())
	if err := check(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}
