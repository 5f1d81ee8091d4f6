package pipeline

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// setup registers the fakes and creates one task of the named example pipeline.
func setup(t *testing.T, example string, input map[string]any) (*Activities, *vendors.Server, *pipeline.Definition, string, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	fakes, err := vendors.Start("127.0.0.1:0", vendors.Options{Secret: []byte("s"), CallbackDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fakes.Close() })
	store := pipelinedb.New(testenv.Mongo(t))
	if err := store.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := vendors.Seed(ctx, store, fakes.URL, testenv.RepoRoot()+"/testdata/pipelines"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(testenv.RepoRoot() + "/testdata/pipelines/" + example + ".json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := pipeline.ParseDefinition(raw)
	if err != nil {
		t.Fatal(err)
	}
	id := pipeline.NewTaskID()
	if _, err := store.InsertTask(ctx, &pipeline.Task{ID: id, UserID: "u", FeatureID: "f", Pipeline: d.Name, Version: d.Version, InputData: input,
		Plan: pipeline.PlanOf(d.Schema.Steps)}); err != nil {
		t.Fatal(err)
	}
	a := newActivities(store, "http://backend.example")
	return a, fakes, d, id, ctx
}

// A retried PipelineSubmitAsync (the activity ran but its completion was lost) returns the stored
// vendor task instead of creating a second vendor job.
func TestSubmitAsyncIsIdempotent(t *testing.T) {
	input := map[string]any{"input_image": "https://cos.example/m.jpg", "model_type": "a", "style": "b"}
	a, fakes, d, id, ctx := setup(t, "model_pose12_pipeline", input)
	req := pipeline.CallRequest{TaskID: id, UserID: "u", StepIndex: 0, Step: d.Schema.Steps[0], ProviderRef: "runninghub", InputData: input}
	first, err := a.PipelineSubmitAsync(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.PipelineSubmitAsync(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.VendorTaskID == "" || again.VendorTaskID != first.VendorTaskID || fakes.Calls("runninghub", "/workflow/execute") != 1 {
		t.Fatalf("first %+v again %+v calls %d", first, again, fakes.Calls("runninghub", "/workflow/execute"))
	}
	req.ProviderRef = "stable_diffusion_api" // falling through to another provider submits there
	other, err := a.PipelineSubmitAsync(ctx, req)
	if err != nil || fakes.Calls("stable_diffusion_api", "/workflow/execute") != 1 || other.ProviderRef != "stable_diffusion_api" {
		t.Fatalf("fall-through submit: %+v %v", other, err)
	}
}

// A retried PipelineInvokeSCF after a successful invocation does not invoke the function again, and
// the step is open for its callback.
func TestInvokeSCFIsIdempotent(t *testing.T) {
	input := map[string]any{"product_images": []any{"a"}, "background_music": "m"}
	a, fakes, d, id, ctx := setup(t, "collection_video_pipeline", input)
	req := pipeline.CallRequest{TaskID: id, UserID: "u", StepIndex: 1, Step: d.Schema.Steps[1], InputData: input,
		StepOutputs: []map[string]any{{"cutout_urls": []any{"c1"}}}}
	res, err := a.PipelineInvokeSCF(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.CallbackURL != "http://backend.example/api/internal/tasks/"+id+"/steps/1/callback" {
		t.Fatalf("callback url %s", res.CallbackURL)
	}
	if _, err := a.PipelineInvokeSCF(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := fakes.Calls("scf", vendors.SCFCompositor); n != 1 {
		t.Fatalf("function invoked %d times", n)
	}
	st, err := storeOf(a).GetStep(ctx, id, 1)
	if err != nil || st.CallbackState != pipeline.CallbackWaiting || st.Status != pipeline.StatusProcessing || st.InvokedAt == nil {
		t.Fatalf("step %+v %v", st, err)
	}
}

// PipelineAdmitTask retried after a crash between any two of its writes charges once and writes
// each document once; a later run with the same task id adopts the task and charges nothing; a
// refused admission leaves no document.
func TestAdmitTaskIsIdempotent(t *testing.T) {
	input := map[string]any{"input_image": "https://cos.example/a.jpg"}
	a, _, _, _, ctx := setup(t, "basic_clean_pipeline", input)
	user := testenv.Unique("admit-")
	if _, err := storeOf(a).SetQuota(ctx, user, "f", 2); err != nil {
		t.Fatal(err)
	}
	req := pipeline.AdmitRequest{TaskID: pipeline.NewTaskID(), RunID: "run-1", UserID: user, FeatureID: "f",
		Pipeline: "basic_clean_pipeline", InputData: input, RequestHash: "h"}
	for range 3 {
		res, err := a.PipelineAdmitTask(ctx, req)
		if err != nil || res.Earlier != nil || res.Version != "1.0.0" || len(res.Schema.Steps) != 1 {
			t.Fatalf("admit: %+v %v", res, err)
		}
	}
	later := req
	later.RunID = "run-2"
	if res, err := a.PipelineAdmitTask(ctx, later); err != nil || res.Earlier == nil || res.Earlier.ID != req.TaskID {
		t.Fatalf("a later run must adopt the task: %+v %v", res, err)
	}
	q, err := storeOf(a).GetQuota(ctx, user, "f")
	if err != nil || q.Remaining != 1 || q.Consumed != 1 || len(q.Ledger) != 1 {
		t.Fatalf("quota %+v %v", q, err)
	}
	// The steps are the task's plan: no row until a step runs, one pending step shown.
	task, err := storeOf(a).GetTask(ctx, req.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if steps, err := storeOf(a).StepsOf(ctx, task); err != nil || len(steps) != 1 || steps[0].Status != pipeline.StatusPending ||
		steps[0].StepName != "image_processing" {
		t.Fatalf("steps %+v %v", steps, err)
	}

	// The last unit goes to one task; the next is refused and leaves nothing behind.
	other := req
	other.TaskID, other.RunID = pipeline.NewTaskID(), "run-3"
	if _, err := a.PipelineAdmitTask(ctx, other); err != nil {
		t.Fatal(err)
	}
	refused := req
	refused.TaskID, refused.RunID = pipeline.NewTaskID(), "run-4"
	_, err = a.PipelineAdmitTask(ctx, refused)
	if !isType(err, pipeline.ErrTypeQuotaExhausted) {
		t.Fatalf("want %s, got %v", pipeline.ErrTypeQuotaExhausted, err)
	}
	if _, err := storeOf(a).GetTask(ctx, refused.TaskID); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("a refused task must not stay: %v", err)
	}
	bad := req
	bad.TaskID, bad.InputData = pipeline.NewTaskID(), map[string]any{}
	if _, err := a.PipelineAdmitTask(ctx, bad); !isType(err, pipeline.ErrTypeInvalidInput) {
		t.Fatalf("want %s, got %v", pipeline.ErrTypeInvalidInput, err)
	}
	bad.Pipeline = "nope"
	if _, err := a.PipelineAdmitTask(ctx, bad); !isType(err, pipeline.ErrTypeUnknownPipeline) {
		t.Fatalf("want %s, got %v", pipeline.ErrTypeUnknownPipeline, err)
	}
}

func isType(err error, typ string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == typ
}

// A sync step's activity retried after a crash between its writes: after the step's one write
// (before the task's finish) the retry does not call the vendor again, uses the recorded output
// and finishes the task once; after the finish, a retry changes nothing and charges nothing.
func TestSyncStepRetryAfterCrash(t *testing.T) {
	input := map[string]any{"input_image": "https://cos.example/c.jpg"}
	a, fakes, d, id, ctx := setup(t, "basic_clean_pipeline", input)
	st := d.Schema.Steps[0]
	task, err := storeOf(a).GetTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	task.FeatureID = testenv.Unique("crash-")
	if _, err := storeOf(a).SetQuota(ctx, task.UserID, task.FeatureID, 1); err != nil {
		t.Fatal(err)
	}
	if err := storeOf(a).ConsumeQuota(ctx, task.UserID, task.FeatureID, id); err != nil {
		t.Fatal(err)
	}
	finish := &pipeline.FinishTaskRequest{TaskID: id, UserID: task.UserID, FeatureID: task.FeatureID, Status: pipeline.StatusSuccess}
	req := pipeline.CallRequest{TaskID: id, UserID: task.UserID, StepIndex: 0, Step: st, ProviderRef: st.ProviderRef, InputData: input}
	// The first attempt's write, then a crash before the finish.
	first, err := a.PipelineCallSync(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if task, _ := storeOf(a).GetTask(ctx, id); task.Status != pipeline.StatusProcessing {
		t.Fatalf("task finished before its finish: %+v", task)
	}
	calls := fakes.Calls(st.ProviderRef, st.Endpoint)
	retry := req
	retry.Sync = &pipeline.SyncStep{Finish: finish}
	for range 2 {
		res, err := a.callSync(ctx, retry, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.Output["result_url"] != first.Output["result_url"] {
			t.Fatalf("retry output %v, first %v", res.Output, first.Output)
		}
	}
	if n := fakes.Calls(st.ProviderRef, st.Endpoint); n != calls {
		t.Fatalf("vendor called %d times after the recorded step, want %d", n, calls)
	}
	task, err = storeOf(a).GetTask(ctx, id)
	if err != nil || task.Status != pipeline.StatusSuccess {
		t.Fatalf("task %+v %v", task, err)
	}
	q, err := storeOf(a).GetQuota(ctx, task.UserID, finish.FeatureID)
	if err != nil || q.Consumed != 1 || q.Refunded != 0 {
		t.Fatalf("quota %+v %v", q, err)
	}
	steps, err := storeOf(a).StepsOf(ctx, task)
	if err != nil || len(steps) != 1 || steps[0].Status != pipeline.StatusSuccess || steps[0].StartedAt == nil || steps[0].CompletedAt == nil {
		t.Fatalf("steps %+v %v", steps, err)
	}
}

// A sync step whose database is down fails its activity (Temporal retries it) and writes no
// row: the step still shows pending, from the task's plan.
func TestSyncStepDatabaseDown(t *testing.T) {
	input := map[string]any{"input_image": "https://cos.example/d.jpg"}
	a, _, d, id, ctx := setup(t, "basic_clean_pipeline", input)
	st := d.Schema.Steps[0]
	b := newActivities(storeOf(a), "http://backend.example")
	b.Store = downSteps{Store: a.Store}
	req := pipeline.CallRequest{TaskID: id, StepIndex: 0, Step: st, ProviderRef: st.ProviderRef, InputData: input}
	if _, err := b.PipelineCallSync(ctx, req); err == nil {
		t.Fatal("a step whose write fails must fail")
	}
	task, err := storeOf(a).GetTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := storeOf(a).StepsOf(ctx, task); err != nil || len(rows) != 1 || rows[0].Status != pipeline.StatusPending || rows[0].StartedAt != nil {
		t.Fatalf("rows %+v %v", rows, err)
	}
}

// downSteps is a store whose step write fails, as when MongoDB is unreachable.
type downSteps struct{ Store }

func (downSteps) RecordStep(context.Context, pipeline.StepResult) error {
	return errors.New("server selection timeout")
}
