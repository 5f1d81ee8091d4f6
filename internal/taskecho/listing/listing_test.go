package listing

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A pushed queue shows up in every listing with its status counts, and a missing project is the
// service's not-found error.
func TestListingsCountByStatus(t *testing.T) {
	ctx := context.Background()
	db := testenv.Mongo(t)
	svc, err := taskecho.New(taskechodb.New(db), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().(*taskechodb.Store).EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"project_id": "p", "project_name": "P", "queue_id": "q", "queue_name": "Q",
		"tasks": []map[string]any{
			{"id": "1", "name": "one", "prompt": "p", "status": "pending"},
			{"id": "2", "name": "two", "prompt": "p", "status": "done"},
			{"id": "3", "name": "three", "prompt": "p", "status": "done"},
		}})
	in, err := taskecho.ParseSubmit(body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Intake.Submit(ctx, taskecho.Actor{Name: "client"}, in, ""); err != nil {
		t.Fatal(err)
	}
	r := New(db, svc)
	want := TaskStats{Total: 3, Pending: 1, Done: 2}
	ps, total, err := r.Projects(ctx, Page{Page: 1, Size: 10}, "", nil)
	if err != nil || total != 1 || len(ps) != 1 || ps[0].QueueCount != 1 || ps[0].Stats != want {
		t.Fatalf("projects %+v total %d (%v)", ps, total, err)
	}
	qs, _, err := r.Queues(ctx, "p", Page{Page: 1, Size: 10}, "")
	if err != nil || len(qs) != 1 || qs[0].Stats != want {
		t.Fatalf("queues %+v (%v)", qs, err)
	}
	q := "q"
	ts, total, err := r.Tasks(ctx, "p", &q, TaskQuery{Page: Page{Page: 1, Size: 10}, Status: taskecho.StatusDone})
	if err != nil || total != 2 || len(ts) != 2 || ts[0].TaskID != "2" {
		t.Fatalf("done tasks %+v total %d (%v), want 2 and 3 in creation order", ts, total, err)
	}
	tot, err := r.Totals(ctx, "")
	if err != nil || tot.ProjectCount != 1 || tot.QueueCount != 1 || tot.TaskStats != want {
		t.Fatalf("totals %+v (%v)", tot, err)
	}
	if _, err := r.Project(ctx, "missing"); !taskecho.IsKind(err, taskecho.KindNotFound) {
		t.Fatalf("missing project: %v, want not found", err)
	}
}
