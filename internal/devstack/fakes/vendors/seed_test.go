package vendors

import (
	"context"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestSeedRegistersFakesExamplesAndQuotaOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := pipelinedb.New(testenv.Mongo(t))
	if err := store.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: "runninghub", BaseURL: "https://real.runninghub.example"}); err != nil {
		t.Fatal(err)
	}
	dir := testenv.RepoRoot() + "/testdata/pipelines"
	for range 2 {
		if err := Seed(ctx, store, "http://127.0.0.1:9999", dir); err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := store.GetProvider(ctx, "runninghub"); p.BaseURL != "https://real.runninghub.example" {
		t.Fatalf("seeding overwrote a configured provider: %+v", p)
	}
	if p, err := store.GetProvider(ctx, FailingVendor); err != nil || p.BaseURL != "http://127.0.0.1:9999/"+FailingVendor {
		t.Fatalf("failing vendor: %+v %v", p, err)
	}
	if f, err := store.GetFunction(ctx, SCFCompositor); err != nil || f.InvokeURL != "http://127.0.0.1:9999/scf/"+SCFCompositor {
		t.Fatalf("function: %+v %v", f, err)
	}
	recs, err := store.ListSchemas(ctx, "", 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("examples: %d %v", len(recs), err)
	}
	if q, err := store.GetQuota(ctx, pipelinedemo.DevQuotaUser, pipelinedemo.DevQuotaFeature); err != nil || q.Remaining != pipelinedemo.DevQuotaUnits {
		t.Fatalf("quota: %+v %v", q, err)
	}
}

// A restart whose fakes listen elsewhere re-points what an earlier run registered (and starts
// its unpinned health over), and leaves a hand-configured vendor and a pinned status alone.
func TestSeedRepointsFakesOfAnEarlierRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := pipelinedb.New(testenv.Mongo(t))
	if err := store.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	dir := testenv.RepoRoot() + "/testdata/pipelines"
	if err := Seed(ctx, store, "http://127.0.0.1:41699", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: "runninghub", BaseURL: "https://real.runninghub.example"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetHealthManual(ctx, FailingVendor, pipeline.HealthDown, false); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetHealthManual(ctx, SlowVendor, pipeline.HealthDown, true); err != nil {
		t.Fatal(err)
	}
	if err := Seed(ctx, store, "http://127.0.0.1:18092", dir); err != nil {
		t.Fatal(err)
	}
	if p, _ := store.GetProvider(ctx, "runninghub"); p.BaseURL != "https://real.runninghub.example" {
		t.Fatalf("re-seeding overwrote a configured provider: %+v", p)
	}
	if p, err := store.GetProvider(ctx, FailingVendor); err != nil || p.BaseURL != "http://127.0.0.1:18092/"+FailingVendor ||
		p.HealthURL != "http://127.0.0.1:18092/"+FailingVendor+"/health" {
		t.Fatalf("fake provider not re-pointed: %+v %v", p, err)
	}
	if f, err := store.GetFunction(ctx, SCFCompositor); err != nil || f.InvokeURL != "http://127.0.0.1:18092/scf/"+SCFCompositor {
		t.Fatalf("fake function not re-pointed: %+v %v", f, err)
	}
	hs, err := store.GetHealth(ctx, []string{FailingVendor, SlowVendor})
	if err != nil {
		t.Fatal(err)
	}
	if h := hs[FailingVendor]; h.Status != pipeline.HealthUp || h.Pinned {
		t.Fatalf("re-pointed provider's health did not start over: %+v", h)
	}
	if h := hs[SlowVendor]; h.Status != pipeline.HealthDown || !h.Pinned {
		t.Fatalf("a pinned status changed: %+v", h)
	}
}
