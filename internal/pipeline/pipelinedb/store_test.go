package pipelinedb

import (
	"context"
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
)

func newTestStore(t *testing.T) (*Store, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	s := New(testenv.Mongo(t))
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

func loadExample(t *testing.T, name string) *pipeline.Definition {
	t.Helper()
	data, err := os.ReadFile("../../../testdata/pipelines/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := pipeline.ParseDefinition(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSchemaStoreImmutability(t *testing.T) {
	s, ctx := newTestStore(t)
	d := loadExample(t, "collection_video_pipeline")
	rec, created, err := s.PublishSchema(ctx, d)
	if err != nil || !created {
		t.Fatalf("publish: %v created=%v", err, created)
	}
	if _, created, err := s.PublishSchema(ctx, d); err != nil || created {
		t.Fatalf("republishing the same schema must be a no-op: %v created=%v", err, created)
	}
	changed := loadExample(t, "collection_video_pipeline")
	changed.Schema.Steps[0], changed.Schema.Steps[2] = changed.Schema.Steps[2], changed.Schema.Steps[0]
	if _, _, err := s.PublishSchema(ctx, changed); !errors.Is(err, pipeline.ErrSchemaConflict) {
		t.Fatalf("want ErrSchemaConflict, got %v", err)
	}
	changed.Version = "1.1.0"
	if _, created, err := s.PublishSchema(ctx, changed); err != nil || !created {
		t.Fatalf("new version: %v", err)
	}
	got, err := s.GetSchema(ctx, d.Name, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Schema, rec.Schema) {
		t.Fatalf("stored schema differs after round trip:\n%#v\n%#v", got.Schema, rec.Schema)
	}
	latest, err := s.GetSchema(ctx, d.Name, "")
	if err != nil || latest.Version != "1.1.0" {
		t.Fatalf("latest: %v %v", latest, err)
	}
	if _, err := s.GetSchema(ctx, "nope", ""); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("want not found, got %v", err)
	}
	list, err := s.ListSchemas(ctx, d.Name, 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
}

func TestQuotaConsumeRefundOnce(t *testing.T) {
	s, ctx := newTestStore(t)
	task1, task2 := pipeline.NewTaskID(), pipeline.NewTaskID()
	if err := s.ConsumeQuota(ctx, "u1", "f1", task1); !errors.Is(err, pipeline.ErrQuotaExhausted) {
		t.Fatalf("no quota yet: %v", err)
	}
	if _, err := s.SetQuota(ctx, "u1", "f1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InsertTask(ctx, &pipeline.Task{ID: task1, UserID: "u1", FeatureID: "f1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ConsumeQuota(ctx, "u1", "f1", task1); err != nil {
		t.Fatal(err)
	}
	if err := s.ConsumeQuota(ctx, "u1", "f1", task1); err != nil {
		t.Fatalf("consuming again for the same task is a no-op: %v", err)
	}
	if err := s.ConsumeQuota(ctx, "u1", "f1", task2); !errors.Is(err, pipeline.ErrQuotaExhausted) {
		t.Fatalf("want exhausted, got %v", err)
	}
	// Concurrent refunds (a retried activity racing itself) return the unit exactly once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.RefundQuota(ctx, "u1", "f1", task1)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				done++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := s.MarkRefunded(ctx, task1); err != nil {
		t.Fatal(err)
	}
	q, err := s.GetQuota(ctx, "u1", "f1")
	if err != nil {
		t.Fatal(err)
	}
	if done != 1 || q.Remaining != 1 || q.Consumed != 1 || q.Refunded != 1 || q.Granted != 1 || len(q.Ledger) != 1 ||
		!q.Ledger[0].Refunded || q.Ledger[0].RefundedAt == nil || q.Ledger[0].TaskID != task1 {
		t.Fatalf("refunds applied=%d quota=%+v", done, q)
	}
	if ok, err := s.RefundQuota(ctx, "u1", "f1", task2); ok || err != nil {
		t.Fatalf("refunding a task that holds no unit gives nothing: %v %v", ok, err)
	}
}

// Every crash point between the quota writes of one task, replayed as the retries Temporal makes:
// the unit moves exactly once whatever is repeated.
func TestQuotaCrashPointsMoveTheUnitOnce(t *testing.T) {
	s, ctx := newTestStore(t)
	check := func(step string, remaining, consumed, refunded int) {
		t.Helper()
		q, err := s.GetQuota(ctx, "u3", "f")
		if err != nil || q.Remaining != remaining || q.Consumed != consumed || q.Refunded != refunded {
			t.Fatalf("%s: quota %+v %v", step, q, err)
		}
	}
	if _, err := s.SetQuota(ctx, "u3", "f", 5); err != nil {
		t.Fatal(err)
	}
	ok, failed := pipeline.NewTaskID(), pipeline.NewTaskID()
	for range 3 { // charge, then crash before the activity completes: retried twice
		if err := s.ConsumeQuota(ctx, "u3", "f", ok); err != nil {
			t.Fatal(err)
		}
		if err := s.ConsumeQuota(ctx, "u3", "f", failed); err != nil {
			t.Fatal(err)
		}
	}
	check("charged twice with retries", 3, 2, 0)
	for range 2 { // success: settle, crash, settle again
		if err := s.SettleQuota(ctx, "u3", "f", ok); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // failure: refund, crash before the task's refunded flag, refund again
		if _, err := s.RefundQuota(ctx, "u3", "f", failed); err != nil {
			t.Fatal(err)
		}
	}
	if did, _ := s.RefundQuota(ctx, "u3", "f", ok); did {
		t.Fatal("a settled task was refunded")
	}
	check("settled one, refunded one", 4, 2, 1)
	var d quotaDoc
	if err := s.c(CollQuotas).FindOne(ctx, quotaFilter("u3", "f")).Decode(&d); err != nil || len(d.OpenTasks) != 0 {
		t.Fatalf("open tasks left: %+v %v", d, err)
	}
}

func TestQuotaConcurrentConsumersNeverOverdraw(t *testing.T) {
	s, ctx := newTestStore(t)
	if _, err := s.SetQuota(ctx, "u2", "f", 3); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.ConsumeQuota(ctx, "u2", "f", pipeline.NewTaskID())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, pipeline.ErrQuotaExhausted):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	q, err := s.GetQuota(ctx, "u2", "f")
	if err != nil {
		t.Fatal(err)
	}
	if ok != 3 || q.Remaining != 0 || q.Consumed != 3 {
		t.Fatalf("consumed %d, quota %+v", ok, q)
	}
	if q, err = s.SetQuota(ctx, "u2", "f", 5); err != nil || q.Remaining != 5 {
		t.Fatalf("set quota keeps the ledger and sets remaining: %+v %v", q, err)
	}
}

func TestStepLifecycle(t *testing.T) {
	s, ctx := newTestStore(t)
	d := loadExample(t, "collection_video_pipeline")
	task := &pipeline.Task{ID: pipeline.NewTaskID(), UserID: "u", FeatureID: "f", Pipeline: d.Name, Version: d.Version,
		InputData: map[string]any{"product_images": []any{"a"}}, EligibleForRefund: true, RunID: "r1",
		Plan: pipeline.PlanOf(d.Schema.Steps)}
	if existing, err := s.InsertTask(ctx, task); existing != nil || err != nil {
		t.Fatalf("insert: %v %v", existing, err)
	}
	if existing, err := s.InsertTask(ctx, &pipeline.Task{ID: task.ID, RunID: "r2"}); err != nil || existing == nil || existing.RunID != "r1" {
		t.Fatalf("the insert decides: a second one returns the first: %+v %v", existing, err)
	}
	in := map[string]any{"image_urls": []any{"x"}, "n": 2.0}
	if err := s.StartStep(ctx, task.ID, 1, "", in); err != nil {
		t.Fatal(err)
	}
	if err := s.AwaitCallback(ctx, task.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, task.ID, 1, pipeline.StatusSuccess, "", map[string]any{"video_url": "v"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, task.ID, 1, pipeline.StatusFailed, "", nil, "late"); err != nil {
		t.Fatal(err)
	}
	if rows, err := s.ListSteps(ctx, task.ID); err != nil || len(rows) != 1 {
		t.Fatalf("rows: %v %v, want only the started step's", rows, err)
	}
	steps, err := s.StepsOf(ctx, task) // the plan's other steps show as pending
	if err != nil || len(steps) != 3 || steps[0].Status != pipeline.StatusPending || steps[2].StepName != d.Schema.Steps[2].Name {
		t.Fatalf("steps: %v %v", steps, err)
	}
	st := steps[1]
	if st.Status != pipeline.StatusSuccess || st.ErrorMessage != "" || st.Output["video_url"] != "v" || st.StartedAt == nil ||
		st.CompletedAt == nil || !reflect.DeepEqual(st.Input, in) {
		t.Fatalf("step 1: %+v", st)
	}
	if err := s.FinishTask(ctx, task.ID, pipeline.StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTask(ctx, task.ID, pipeline.StatusSuccess, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, task.ID)
	if err != nil || got.Status != pipeline.StatusFailed || got.ErrorReason != "boom" {
		t.Fatalf("task: %+v %v", got, err)
	}
}

func TestProvidersHealthAndCalls(t *testing.T) {
	s, ctx := newTestStore(t)
	if _, err := s.PutProvider(ctx, &pipeline.Provider{Ref: "p1", BaseURL: "http://x", AuthHeader: "Authorization", AuthValue: "k"}); err != nil {
		t.Fatal(err)
	}
	hs, err := s.GetHealth(ctx, []string{"p1", "p2"})
	if err != nil || hs["p1"].Status != pipeline.HealthUp || len(hs) != 1 {
		t.Fatalf("new provider must be up: %+v %v", hs, err)
	}
	if _, err := s.SetHealthManual(ctx, "p1", pipeline.HealthDown, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveHealth(ctx, pipeline.Health{ProviderRef: "p1", Status: pipeline.HealthUp, LastCheckAt: time.Now(), ErrorRate: 10}); err != nil {
		t.Fatal(err)
	}
	hs, _ = s.GetHealth(ctx, []string{"p1"})
	if hs["p1"].Status != pipeline.HealthDown || hs["p1"].ErrorRate != 10 {
		t.Fatalf("a pinned status survives the check: %+v", hs["p1"])
	}
	if _, err := s.SetHealthManual(ctx, "nope", pipeline.HealthDown, true); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("unknown provider: %v", err)
	}
	now := time.Now()
	for i, ok := range []bool{true, false, true, true} {
		if err := s.RecordCall(ctx, pipeline.ProviderCall{ProviderRef: "p1", At: now.Add(-time.Duration(i) * time.Second), OK: ok, DurationMS: 100}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.RecentCalls(ctx, "p1", now.Add(-time.Minute), 100)
	if err != nil || st.Calls != 4 || st.Failures != 1 || st.AvgMS != 100 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if err := s.PruneCalls(ctx, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.RecentCalls(ctx, "p1", now.Add(-time.Minute), 100); st.Calls != 0 {
		t.Fatalf("prune left %d", st.Calls)
	}
	if _, err := s.PutFunction(ctx, &pipeline.Function{Name: "video-compositor", InvokeURL: "http://f"}); err != nil {
		t.Fatal(err)
	}
	lk, err := s.Lookup(ctx)
	if err != nil || !lk.ProviderExists("p1") || lk.ProviderExists("p2") || !lk.FunctionExists("video-compositor") {
		t.Fatalf("lookup wrong: %v", err)
	}
}
