package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

// scaleInsertBatch is how many documents one InsertMany carries while loading a size.
const scaleInsertBatch = 1000

// scaleProject is what the scale series loads at one size: one TaskEcho project of size
// project-level tasks, the first pending of them pullable server tasks (oldest first, so pulls
// take them in order), the rest finished client tasks with a short conversation, as months of
// use leave them; and size finished pipeline tasks of one user, each with its step rows.
type scaleProject struct {
	id      string
	size    int
	pending int
	// pipeIDs starts the ids of the size's pipeline tasks (pipelineTaskID).
	pipeIDs string
	// crawlBase is the first of the size's crawl task ids (crawlID).
	crawlBase int64
}

// scaleWindow is how many candidates past the ones it takes a pull reads (taskecho's
// claimWindowFactor × limit): the last sample's pull must still find a full window, so every
// pull reads the same number of candidates and sends the same commands.
const scaleWindow = 4 * pullLimit

// scalePending is how many pending tasks samples rounds need: each pulls pullLimit, and the
// last still finds a full window behind them.
func scalePending(samples int) int { return samples*pullLimit + scaleWindow }

// newScaleProject names a fresh project of size tasks, pending of them pullable (size must be
// larger: the series appends to the finished ones).
func newScaleProject(id string, size, pending int) scaleProject {
	return scaleProject{id: id, size: size, pending: min(size, pending),
		pipeIDs: fmt.Sprintf("%08x%08x", uint32(time.Now().Unix()), rand.Uint32()), crawlBase: newCrawlBase()}
}

// pipelineUser is the one user every loaded pipeline task belongs to: a user with months of
// history, whose task page the API and the console read.
func (p scaleProject) pipelineUser() string { return "scale-user-" + p.id }

// pipelineTaskID is the id of pipeline task i: ObjectID-shaped like pipeline.NewTaskID, ordered
// by i, so newest-first is highest i first.
func (p scaleProject) pipelineTaskID(i int) string { return fmt.Sprintf("%s%08x", p.pipeIDs, i) }

// scalePipelineSteps is the plan of every loaded pipeline task: a call and its async follow-up.
var scalePipelineSteps = []pipeline.Step{{Name: "draft", Type: pipeline.StepSyncAPI}, {Name: "render", Type: pipeline.StepAsyncAPI}}

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
	err := insertAll(ctx, db.Collection(taskechodb.CollTasks), p.size, func(i int) []any {
		return []any{scaleTask(p, i, created.Add(time.Duration(i)*time.Minute), now)}
	})
	if err != nil {
		return err
	}
	if err := insertAll(ctx, db.Collection(pipelinedb.CollTasks), p.size, func(i int) []any {
		return []any{scalePipelineTask(p, i, created.Add(time.Duration(i)*time.Minute))}
	}); err != nil {
		return err
	}
	if err := insertAll(ctx, db.Collection(pipelinedb.CollSteps), p.size, func(i int) []any {
		return scalePipelineStepRows(p.pipelineTaskID(i), created.Add(time.Duration(i)*time.Minute))
	}); err != nil {
		return err
	}
	return loadScaleReads(ctx, db, p, created)
}

// insertAll inserts the documents docs(0) … docs(n-1) build, in unordered batches of about
// scaleInsertBatch.
func insertAll(ctx context.Context, coll *mongo.Collection, n int, docs func(i int) []any) error {
	batch := make([]any, 0, scaleInsertBatch)
	for i := range n {
		batch = append(batch, docs(i)...)
		if len(batch) >= scaleInsertBatch || i == n-1 {
			if _, err := coll.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false)); err != nil {
				return fmt.Errorf("insert into %s: %w", coll.Name(), err)
			}
			batch = batch[:0]
		}
	}
	return nil
}

// scalePipelineTask is pipeline task i of p: finished, as the workflow leaves it.
func scalePipelineTask(p scaleProject, i int, at time.Time) *pipeline.Task {
	id := p.pipelineTaskID(i)
	done := at.Add(30 * time.Second)
	return &pipeline.Task{ID: id, UserID: p.pipelineUser(), FeatureID: "scale-feature", Pipeline: "scale-pipe", Version: "v1",
		InputData: map[string]any{"prompt": fmt.Sprintf("render item %d", i)}, Status: pipeline.StatusSuccess,
		WorkflowID: pipeline.WorkflowID(id), RunID: "run-" + id, CreatedAt: at, UpdatedAt: done, StartedAt: &at,
		CompletedAt: &done, Plan: pipeline.PlanOf(scalePipelineSteps)}
}

// scalePipelineStepRows are the step rows a finished task of scalePipelineSteps has.
func scalePipelineStepRows(taskID string, at time.Time) []any {
	rows := make([]any, len(scalePipelineSteps))
	for i, st := range scalePipelineSteps {
		started, done := at.Add(time.Duration(i)*10*time.Second), at.Add(time.Duration(i+1)*10*time.Second)
		rows[i] = &pipeline.StepRecord{ID: taskID + ":" + strconv.Itoa(i), TaskID: taskID, StepIndex: i, StepName: st.Name,
			StepType: st.Type, ProviderRef: "scale-provider", Status: pipeline.StatusSuccess,
			Input: map[string]any{"prompt": "step " + st.Name}, Output: map[string]any{"url": "https://example.test/" + taskID},
			StartedAt: &started, CompletedAt: &done, CreatedAt: started}
	}
	return rows
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
func dropScaleProject(ctx context.Context, db *mongo.Database, p scaleProject) error {
	for _, coll := range []string{taskechodb.CollTasks, taskechodb.CollProjects, taskechodb.CollAudit, taskechodb.CollExecutions} {
		if _, err := db.Collection(coll).DeleteMany(ctx, bson.D{{Key: "project_id", Value: p.id}}); err != nil {
			return fmt.Errorf("drop %s of %s: %w", coll, p.id, err)
		}
	}
	ids := bson.D{{Key: "$gte", Value: p.pipelineTaskID(0)}, {Key: "$lte", Value: p.pipelineTaskID(p.size)}}
	if _, err := db.Collection(pipelinedb.CollTasks).DeleteMany(ctx, bson.D{{Key: "user_id", Value: p.pipelineUser()}}); err != nil {
		return fmt.Errorf("drop pipeline tasks of %s: %w", p.id, err)
	}
	if _, err := db.Collection(pipelinedb.CollSteps).DeleteMany(ctx, bson.D{{Key: "task_id", Value: ids}}); err != nil {
		return fmt.Errorf("drop pipeline steps of %s: %w", p.id, err)
	}
	return dropScaleReads(ctx, db, p)
}
