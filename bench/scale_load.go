package main

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

// scaleInsertBatch is how many documents one InsertMany carries while loading a size.
const scaleInsertBatch = 1000

// scaleProject is one TaskEcho project loaded for the scale series: size project-level tasks,
// the first pending of them pullable server tasks (oldest first, so pulls take them in order),
// the rest finished client tasks with a short conversation, as months of use leave them.
type scaleProject struct {
	id      string
	size    int
	pending int
}

// loadScaleProject writes the project and its tasks straight into the stores' collections with
// unordered InsertMany batches: the documents are the domain's own model types, as the service
// would have written them, without the service's per-task commands (loading 100,000 tasks one
// CreateTask at a time takes far longer than the measurements).
func loadScaleProject(ctx context.Context, db *mongo.Database, p scaleProject) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	created := now.Add(-time.Duration(p.size) * time.Minute)
	project := taskecho.Project{ID: taskecho.NewID(), ProjectID: p.id, Name: "scale " + p.id,
		LastTaskAt: &now, CreatedAt: created, UpdatedAt: now}
	if _, err := db.Collection(taskechodb.CollProjects).InsertOne(ctx, project); err != nil {
		return fmt.Errorf("insert project %s: %w", p.id, err)
	}
	tasks := db.Collection(taskechodb.CollTasks)
	batch := make([]any, 0, scaleInsertBatch)
	for i := range p.size {
		batch = append(batch, scaleTask(p, i, created.Add(time.Duration(i)*time.Minute), now))
		if len(batch) == scaleInsertBatch || i == p.size-1 {
			if _, err := tasks.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false)); err != nil {
				return fmt.Errorf("insert tasks of %s: %w", p.id, err)
			}
			batch = batch[:0]
		}
	}
	return nil
}

// scaleTask is task i of p: pending server tasks first, then finished client tasks.
func scaleTask(p scaleProject, i int, at, now time.Time) *taskecho.Task {
	taskID := fmt.Sprintf("t-%07d", i)
	t := &taskecho.Task{
		ID: taskecho.NewID(), Key: taskecho.TaskKey(p.id, nil, taskID), ProjectID: p.id, TaskID: taskID,
		Name: fmt.Sprintf("task %d", i), Prompt: fmt.Sprintf("implement item %d of the plan", i),
		SpecFile: []string{"docs/spec.md"}, Tags: []string{"scale"}, CreatedAt: at, UpdatedAt: at,
		PullHistory: []taskecho.PullEntry{}, Messages: []taskecho.Message{}, Logs: []taskecho.LogEntry{},
	}
	if i < p.pending {
		t.Status, t.Source, t.ServerModifiedAt, t.PendingSince = taskecho.StatusPending, taskecho.SourceServer, &at, &at
		return t
	}
	t.Status, t.Source = taskecho.StatusDone, taskecho.SourceClient
	t.Messages = []taskecho.Message{
		{Role: "USER", Content: t.Prompt, CreatedAt: at},
		{Role: "ASSISTANT", Content: "done: " + t.Name, CreatedAt: at.Add(time.Minute)},
	}
	t.MessageSeq = int64(len(t.Messages))
	t.UpdatedAt = now
	return t
}

// dropScaleProject removes what loadScaleProject wrote, so the next size starts from a store
// that holds only its own tasks.
func dropScaleProject(ctx context.Context, db *mongo.Database, projectID string) error {
	for _, coll := range []string{taskechodb.CollTasks, taskechodb.CollProjects, taskechodb.CollAudit, taskechodb.CollExecutions} {
		if _, err := db.Collection(coll).DeleteMany(ctx, map[string]any{"project_id": projectID}); err != nil {
			return fmt.Errorf("drop %s of %s: %w", coll, projectID, err)
		}
	}
	return nil
}
