package pipeline

import (
	"context"
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
