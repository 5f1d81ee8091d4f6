package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Command budgets: creating a pipeline task (the workflow's admission: schema, task,
// charge, steps) ≤ 4 MongoDB commands; charging or refunding a quota unit ≤ 2, the same for an
// account with one task or with many.
const (
	budgetTaskCreation = 4
	budgetQuotaCharge  = 2
	budgetQuotaRefund  = 2
)

// monitoredActivities are the activities on a database whose client counts commands for
// mongox.WithTally, like the platform's.
func monitoredActivities(t *testing.T) (*Activities, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := mongo.Connect(options.Client().ApplyURI(testenv.MongoURI(t)).SetMonitor(mongox.Monitor(nil)))
	if err != nil {
		t.Fatal(err)
	}
	db := c.Database(testenv.Unique("budget_"))
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = c.Disconnect(context.Background()) })
	store := pipelinedb.New(db)
	if err := store.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := vendors.Seed(ctx, store, "http://127.0.0.1:1", testenv.RepoRoot()+"/testdata/pipelines"); err != nil {
		t.Fatal(err)
	}
	return newActivities(store, "http://backend.example"), ctx
}

func TestCommandBudgets(t *testing.T) {
	a, ctx := monitoredActivities(t)
	user := testenv.Unique("budget-")
	if _, err := storeOf(a).SetQuota(ctx, user, "f", 1000); err != nil {
		t.Fatal(err)
	}
	admit := func() (string, *mongox.Tally) {
		tctx, tally := mongox.WithTally(ctx)
		id := pipeline.NewTaskID()
		if _, err := a.PipelineAdmitTask(tctx, pipeline.AdmitRequest{TaskID: id, RunID: "r", UserID: user, FeatureID: "f",
			Pipeline: "basic_clean_pipeline", InputData: map[string]any{"input_image": "x"}, RequestHash: "h"}); err != nil {
			t.Fatal(err)
		}
		return id, tally
	}
	first, tally := admit()
	if tally.Total() > budgetTaskCreation {
		t.Errorf("task creation: %s, budget %d", tally, budgetTaskCreation)
	}
	for range 40 { // an account with history: the costs must not grow with it
		id, _ := admit()
		if err := a.PipelineFinishTask(ctx, pipeline.FinishTaskRequest{TaskID: id, UserID: user, FeatureID: "f", Status: pipeline.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	if _, again := admit(); again.Total() != tally.Total() {
		t.Errorf("task creation after 40 tasks: %s, first: %s", again, tally)
	}
	measure := func(what string, budget int, op func(ctx context.Context) error) {
		t.Helper()
		tctx, tally := mongox.WithTally(ctx)
		if err := op(tctx); err != nil {
			t.Fatal(err)
		}
		if tally.Total() > budget {
			t.Errorf("%s: %s, budget %d", what, tally, budget)
		}
	}
	id := pipeline.NewTaskID()
	measure("quota charge", budgetQuotaCharge, func(c context.Context) error { return storeOf(a).ConsumeQuota(c, user, "f", id) })
	measure("repeated quota charge", budgetQuotaCharge, func(c context.Context) error { return storeOf(a).ConsumeQuota(c, user, "f", id) })
	measure("quota refund", budgetQuotaRefund, func(c context.Context) error {
		_, err := a.PipelineRefundQuota(c, pipeline.RefundRequest{TaskID: first, UserID: user, FeatureID: "f"})
		return err
	})
	measure("repeated quota refund", budgetQuotaRefund, func(c context.Context) error {
		_, err := a.PipelineRefundQuota(c, pipeline.RefundRequest{TaskID: first, UserID: user, FeatureID: "f"})
		return err
	})
}

// Whole-task budgets: a pipeline task of 1 sync step ≤ 6 MongoDB commands, of 3 sync steps ≤ 8,
// from admission to finish, on a warm worker (the provider and health documents cached, as they
// are under load). Why these are the floor — every command left is a write no other write can
// carry, or the one read that resolves "the latest version":
//   - admission: read the latest schema version (1; 0 for a pinned version a worker has read:
//     published versions never change), insert the task with its plan of steps (1: the insert
//     that decides idempotency), charge the quota unit (1: another document, guarded by its
//     open_tasks);
//   - each sync step: one upsert of its row with provider, input, output, started_at,
//     completed_at and its vendor calls (1 per step: the step record the API shows);
//   - finish: the task's final status (1) and the quota settlement (1: the quota document again,
//     releasing the task id that guards a refund).
//
// So 5 + steps: 6 and 8.
const (
	budgetTaskOneStep    = 6
	budgetTaskThreeSteps = 8
)

func TestWholeTaskCommandBudgets(t *testing.T) {
	a, ctx := monitoredActivities(t)
	fakes, err := vendors.Start("127.0.0.1:0", vendors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fakes.Close() })
	store := storeOf(a)
	if err := vendors.Seed(ctx, store, fakes.URL, testenv.RepoRoot()+"/testdata/pipelines"); err != nil {
		t.Fatal(err)
	}
	a.Breaker = pipeline.BreakerPolicy{Threshold: 5, Cooldown: time.Minute}
	one, err := store.GetSchema(ctx, "basic_clean_pipeline", "")
	if err != nil {
		t.Fatal(err)
	}
	three := &pipeline.Definition{Name: "budget_three_steps", Version: "1.0.0", Schema: one.Schema}
	three.Schema.Steps = nil
	for i := range 3 {
		st := one.Schema.Steps[0]
		st.Name = fmt.Sprintf("%s_%d", st.Name, i+1)
		three.Schema.Steps = append(three.Schema.Steps, st)
	}
	if _, _, err := store.PublishSchema(ctx, three); err != nil {
		t.Fatal(err)
	}
	user := testenv.Unique("whole-")
	if _, err := store.SetQuota(ctx, user, "f", 100); err != nil {
		t.Fatal(err)
	}
	// run is one task as PipelineWorkflow runs it: the admission and the first choice (one
	// local-activity batch), then one activity per step, the last one finishing the task.
	run := func(ctx context.Context, name string) string {
		id := pipeline.NewTaskID()
		adm, err := a.PipelineAdmitTask(ctx, pipeline.AdmitRequest{TaskID: id, RunID: "r", UserID: user, FeatureID: "f",
			Pipeline: name, InputData: map[string]any{"input_image": "https://cos.example/x.jpg"}, RequestHash: "h"})
		if err != nil {
			t.Fatal(err)
		}
		steps := adm.Schema.Steps
		choice, err := a.PipelineChooseProviders(ctx, pipeline.ChooseRequest{TaskID: id, Candidates: steps[0].Candidates()})
		if err != nil {
			t.Fatal(err)
		}
		var outputs []map[string]any
		for i, st := range steps {
			sync := &pipeline.SyncStep{}
			if i+1 < len(steps) {
				sync.NextCandidates = steps[i+1].Candidates()
			} else {
				sync.Finish = &pipeline.FinishTaskRequest{TaskID: id, UserID: user, FeatureID: "f", Status: pipeline.StatusSuccess}
			}
			res, err := a.PipelineCallSync(ctx, pipeline.CallRequest{TaskID: id, UserID: user, StepIndex: i, Step: st,
				ProviderRef: choice.Usable[0], InputData: map[string]any{"input_image": "https://cos.example/x.jpg"}, StepOutputs: outputs, Sync: sync})
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, res.Output)
			choice = res.Next
		}
		return id
	}
	run(ctx, "basic_clean_pipeline") // warms the worker's provider and health caches
	for _, c := range []struct {
		pipeline string
		steps    int
		budget   int
	}{{"basic_clean_pipeline", 1, budgetTaskOneStep}, {"budget_three_steps", 3, budgetTaskThreeSteps}} {
		tctx, tally := mongox.WithTally(ctx)
		id := run(tctx, c.pipeline)
		if tally.Total() > c.budget {
			t.Errorf("%d-step task: %s, budget %d", c.steps, tally, c.budget)
		}
		t.Logf("%d-step task: %s (budget %d)", c.steps, tally, c.budget)
		task, err := store.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := store.StepsOf(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != pipeline.StatusSuccess || len(rows) != c.steps {
			t.Fatalf("task %+v steps %+v", task, rows)
		}
		for _, r := range rows {
			if r.Status != pipeline.StatusSuccess || r.StartedAt == nil || r.CompletedAt == nil || r.ProviderRef == "" || r.Output == nil || r.StepName == "" {
				t.Fatalf("step %+v", r)
			}
		}
		if held, _ := store.QuotaPage(ctx, user, "f", 1); held == nil {
			t.Fatal("no quota")
		}
	}
}
