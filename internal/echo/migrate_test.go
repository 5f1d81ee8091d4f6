package echo

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestMigrateTaskEchoData imports a TaskEcho database (embedded queue tasks, camelCase project
// documents, project-level tasks) and is idempotent.
func TestMigrateTaskEchoData(t *testing.T) {
	f := newFixture(t)
	old := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	pOID := bson.NewObjectID()
	mustInsert := func(coll string, doc bson.M) {
		t.Helper()
		if _, err := f.svc.db.Collection(coll).InsertOne(f.ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	mustInsert(CollProjects, bson.M{"_id": pOID, "projectId": "legacy", "name": "Legacy", "clientInfo": bson.M{"hostname": "h"},
		"lastTaskAt": old, "createdAt": old, "updatedAt": old})
	mustInsert(CollQueues, bson.M{"projectId": pOID, "queueId": "task.json", "name": "task.json", "createdAt": old, "updatedAt": old,
		"tasks": bson.A{
			bson.M{"id": "1", "name": "one", "prompt": "p1", "status": "done", "spec_file": bson.A{"a.md"},
				"messages": bson.A{bson.M{"role": "USER", "content": "hi", "sessionId": "s", "createdAt": old}},
				"logs":     bson.A{bson.M{"content": "l", "createdAt": old}}},
			bson.M{"id": "2", "name": "two", "prompt": "p2", "status": "pending", "source": "server", "priority": "high",
				"pulled_at": old, "pulled_by": "k", "pull_history": bson.A{bson.M{"pulled_at": old, "pulled_by": "k"}}},
		}})
	mustInsert(CollTasks, bson.M{"projectId": pOID, "taskId": "pt", "name": "project task", "prompt": "pp", "status": "pending",
		"created_at": old, "updated_at": old})

	r, err := f.svc.Migrate(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.ProjectsConverted != 1 || r.QueuesConverted != 1 || r.TasksImported != 3 {
		t.Fatalf("first run %+v", r)
	}
	q := "task.json"
	one, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "legacy", QueueID: &q, TaskID: "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if one.Source != SourceClient || one.PulledAt != nil || len(one.Messages) != 1 || *one.Messages[0].SessionID != "s" {
		t.Fatalf("migrated client task %+v", one)
	}
	two, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "legacy", QueueID: &q, TaskID: "2"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if two.Source != SourceServer || two.PriorityRank != 8 || len(two.PullHistory) != 1 || two.PullHistory[0].ReleasedAt == nil {
		t.Fatalf("migrated server task %+v", two)
	}
	pt, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "legacy", TaskID: "pt"}, false)
	if err != nil || pt.Source != SourceServer {
		t.Fatalf("migrated project task %+v (%v)", pt, err)
	}
	// A migrated unpulled server task is pullable.
	if r := f.pull("w", PullFilter{ProjectID: "legacy", ProjectOnly: true}); len(r.Tasks) != 1 || r.Tasks[0].TaskID != "pt" {
		t.Fatalf("pull after migration %v", ids(r.Tasks))
	}
	again, err := f.svc.Migrate(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if *again != (MigrateReport{}) {
		t.Fatalf("second run changed %+v, want nothing", again)
	}
}

// The seed's backfill alone: tasks without source/pulled_at get client/null, once.
func TestMigrateBackfillsSourceAndPulledAt(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.tasks.InsertOne(f.ctx, bson.M{"key": TaskKey("p", nil, "x"), "project_id": "p", "queue_id": nil, "task_id": "x",
		"name": "x", "prompt": "x", "status": "pending", "created_at": f.now, "updated_at": f.now}); err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Migrate(f.ctx)
	if err != nil || r.SourceBackfilled != 1 || r.PulledAtAdded != 1 {
		t.Fatalf("report %+v (%v)", r, err)
	}
	var doc bson.M
	if err := f.svc.tasks.FindOne(f.ctx, bson.M{"task_id": "x"}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc["pulled_at"]; !ok || v != nil || doc["source"] != SourceClient {
		t.Fatalf("backfilled %+v", doc)
	}
	if again, _ := f.svc.Migrate(f.ctx); again.SourceBackfilled != 0 || again.PulledAtAdded != 0 {
		t.Fatalf("second run %+v", again)
	}
}
