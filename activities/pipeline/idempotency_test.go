package pipeline

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/fakes/vendors"
	domain "github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
)

// setup registers the fakes and creates one task of the named seed example.
func setup(t *testing.T, example string, input map[string]any) (*Activities, *vendors.Server, *domain.Definition, string, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	fakes, err := vendors.Start("127.0.0.1:0", vendors.Options{Secret: []byte("s"), CallbackDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fakes.Close() })
	store := domain.NewStore(testenv.Mongo(t))
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
	d, err := domain.ParseDefinition(raw)
	if err != nil {
		t.Fatal(err)
	}
	id := domain.NewTaskID()
	if err := store.CreateTask(ctx, &domain.Task{ID: id, UserID: "u", FeatureID: "f", Pipeline: d.Name, Version: d.Version, InputData: input}); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateSteps(ctx, id, d.Schema.Steps); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store, HTTP: &http.Client{Timeout: 10 * time.Second}, BackendURL: "http://backend.example",
		Metrics: NewMetrics(prometheus.NewRegistry())}
	return a, fakes, d, id, ctx
}

// A retried SubmitAsync (the activity ran but its completion was lost) returns the stored vendor
// task instead of creating a second vendor job.
func TestSubmitAsyncIsIdempotent(t *testing.T) {
	input := map[string]any{"input_image": "https://cos.example/m.jpg", "model_type": "a", "style": "b"}
	a, fakes, d, id, ctx := setup(t, "model_pose12_pipeline", input)
	req := domain.CallRequest{TaskID: id, UserID: "u", StepIndex: 0, Step: d.Schema.Steps[0], ProviderRef: "runninghub", InputData: input}
	first, err := a.SubmitAsync(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.SubmitAsync(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.VendorTaskID == "" || again.VendorTaskID != first.VendorTaskID || fakes.Calls("runninghub", "/workflow/execute") != 1 {
		t.Fatalf("first %+v again %+v calls %d", first, again, fakes.Calls("runninghub", "/workflow/execute"))
	}
	req.ProviderRef = "stable_diffusion_api" // falling through to another provider submits there
	other, err := a.SubmitAsync(ctx, req)
	if err != nil || fakes.Calls("stable_diffusion_api", "/workflow/execute") != 1 || other.ProviderRef != "stable_diffusion_api" {
		t.Fatalf("fall-through submit: %+v %v", other, err)
	}
}

// A retried InvokeSCF after a successful invocation does not invoke the function again, and the
// step is open for its callback.
func TestInvokeSCFIsIdempotent(t *testing.T) {
	input := map[string]any{"product_images": []any{"a"}, "background_music": "m"}
	a, fakes, d, id, ctx := setup(t, "collection_video_pipeline", input)
	req := domain.CallRequest{TaskID: id, UserID: "u", StepIndex: 1, Step: d.Schema.Steps[1], InputData: input,
		StepOutputs: []map[string]any{{"cutout_urls": []any{"c1"}}}}
	res, err := a.InvokeSCF(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.CallbackURL != "http://backend.example/api/internal/tasks/"+id+"/steps/1/callback" {
		t.Fatalf("callback url %s", res.CallbackURL)
	}
	if _, err := a.InvokeSCF(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := fakes.Calls("scf", vendors.SCFCompositor); n != 1 {
		t.Fatalf("function invoked %d times", n)
	}
	st, err := a.Store.GetStep(ctx, id, 1)
	if err != nil || st.CallbackState != domain.CallbackWaiting || st.Status != domain.StatusProcessing || st.InvokedAt == nil {
		t.Fatalf("step %+v %v", st, err)
	}
}
