package migrate

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixture is a fresh database with its echo indexes and a service that reads what Run wrote.
type fixture struct {
	ctx context.Context
	db  *mongo.Database
	svc *taskecho.Server
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), db: testenv.Mongo(t), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	svc, err := taskecho.New(taskechodb.New(f.db), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetClock(func() time.Time { return f.now })
	if err := taskechodb.EnsureIndexes(f.ctx, f.db); err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

// TestMigrateTaskEchoData imports a TaskEcho database (embedded queue tasks, camelCase project
// documents, project-level tasks) and is idempotent.
func TestMigrateTaskEchoData(t *testing.T) {
	f := newFixture(t)
	old := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	pOID := bson.NewObjectID()
	mustInsert := func(coll string, doc bson.M) {
		t.Helper()
		if _, err := f.db.Collection(coll).InsertOne(f.ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	mustInsert(taskechodb.CollProjects, bson.M{"_id": pOID, "projectId": "legacy", "name": "Legacy", "clientInfo": bson.M{"hostname": "h"},
		"lastTaskAt": old, "createdAt": old, "updatedAt": old})
	mustInsert(taskechodb.CollQueues, bson.M{"projectId": pOID, "queueId": "task.json", "name": "task.json", "createdAt": old, "updatedAt": old,
		"tasks": bson.A{
			bson.M{"id": "1", "name": "one", "prompt": "p1", "status": "done", "spec_file": bson.A{"a.md"},
				"messages": bson.A{bson.M{"role": "USER", "content": "hi", "sessionId": "s", "createdAt": old}},
				"logs":     bson.A{bson.M{"content": "l", "createdAt": old}}},
			bson.M{"id": "2", "name": "two", "prompt": "p2", "status": "pending", "source": "server", "priority": "high",
				"pulled_at": old, "pulled_by": "k", "pull_history": bson.A{bson.M{"pulled_at": old, "pulled_by": "k"}}},
		}})
	mustInsert(taskechodb.CollTasks, bson.M{"projectId": pOID, "taskId": "pt", "name": "project task", "prompt": "pp", "status": "pending",
		"created_at": old, "updated_at": old})

	var steps []int
	r, err := Run(f.ctx, f.db, func(done, total int) { steps = append(steps, done*10+total) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps, []int{14, 24, 34, 44}) { // done*10+total after each of the 4 phases
		t.Fatalf("progress steps %v, want 1/4 … 4/4", steps)
	}
	if r.ProjectsConverted != 1 || r.QueuesConverted != 1 || r.TasksImported != 3 {
		t.Fatalf("first run %+v", r)
	}
	q := "task.json"
	one, err := f.svc.Lookup.Task(f.ctx, taskecho.TaskRef{ProjectID: "legacy", QueueID: &q, TaskID: "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if one.Source != taskecho.SourceClient || one.PulledAt != nil || len(one.Messages) != 1 || *one.Messages[0].SessionID != "s" {
		t.Fatalf("migrated client task %+v", one)
	}
	two, err := f.svc.Lookup.Task(f.ctx, taskecho.TaskRef{ProjectID: "legacy", QueueID: &q, TaskID: "2"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if two.Source != taskecho.SourceServer || two.PriorityRank != 8 || len(two.PullHistory) != 1 || two.PullHistory[0].ReleasedAt == nil {
		t.Fatalf("migrated server task %+v", two)
	}
	pt, err := f.svc.Lookup.Task(f.ctx, taskecho.TaskRef{ProjectID: "legacy", TaskID: "pt"}, false)
	if err != nil || pt.Source != taskecho.SourceServer {
		t.Fatalf("migrated project task %+v (%v)", pt, err)
	}
	// A migrated unpulled server task is pullable.
	pulled, err := f.svc.Leases.Pull(f.ctx, taskecho.Actor{Name: "w"}, taskecho.PullFilter{ProjectID: "legacy"})
	if err != nil || len(pulled.Tasks) != 1 || pulled.Tasks[0].TaskID != "pt" {
		t.Fatalf("pull after migration %+v (%v)", pulled, err)
	}
	again, err := Run(f.ctx, f.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *again != (Report{}) {
		t.Fatalf("second run changed %+v, want nothing", again)
	}
}

// The backfill alone: tasks without source/pulled_at get client/null, once.
func TestMigrateBackfillsSourceAndPulledAt(t *testing.T) {
	f := newFixture(t)
	if _, err := f.db.Collection(taskechodb.CollTasks).InsertOne(f.ctx, bson.M{"key": taskecho.TaskKey("p", nil, "x"), "project_id": "p", "queue_id": nil, "task_id": "x",
		"name": "x", "prompt": "x", "status": "pending", "created_at": f.now, "updated_at": f.now}); err != nil {
		t.Fatal(err)
	}
	r, err := Run(f.ctx, f.db, nil)
	if err != nil || r.SourceBackfilled != 1 || r.PulledAtAdded != 1 {
		t.Fatalf("report %+v (%v)", r, err)
	}
	var doc bson.M
	if err := f.db.Collection(taskechodb.CollTasks).FindOne(f.ctx, bson.M{"task_id": "x"}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc["pulled_at"]; !ok || v != nil || doc["source"] != taskecho.SourceClient {
		t.Fatalf("backfilled %+v", doc)
	}
	if again, _ := Run(f.ctx, f.db, nil); again.SourceBackfilled != 0 || again.PulledAtAdded != 0 {
		t.Fatalf("second run %+v", again)
	}
}
