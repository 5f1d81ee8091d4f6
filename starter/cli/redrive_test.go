package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// `starter pipeline redrive`'s bulk path: the dry run counts the filter's failed tasks, the run
// prints done/total progress lines until the operation finishes, and a single redrive of a
// succeeded task is refused.
func TestRedriveCommands(t *testing.T) {
	env := e2e.New(t)
	var fail atomic.Bool
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"reply":"ok"}`))
	}))
	t.Cleanup(vendor.Close)
	name := testenv.Unique("cli_redrive_")
	store, ctx := pipelinedb.New(env.Platform.Mongo), env.Context()
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: name, BaseURL: vendor.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: name, Endpoint: "/reply", InputMapping: map[string]any{},
		OutputMapping: map[string]string{"text": "$.reply"}, Retry: &pipeline.Retry{MaxAttempts: 1}, TimeoutSeconds: 10}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, "cli-user", "feat", 10); err != nil {
		t.Fatal(err)
	}
	wf := &pipelinewf.Client{Temporal: env.Platform.Temporal, TaskQueue: env.Config.Temporal.TaskQueue}
	fail.Store(true)
	var ids []string
	for range 3 {
		adm, err := wf.Start(ctx, pipelinewf.StartRequest{TaskRequest: pipeline.TaskRequest{Pipeline: name, UserID: "cli-user", FeatureID: "feat"}})
		if err != nil {
			t.Fatal(err)
		}
		_ = wf.Wait(ctx, adm.TaskID)
		ids = append(ids, adm.TaskID)
	}
	fail.Store(false)

	window := env.Config.Pipeline.RedriveWindow
	var out bytes.Buffer
	f := redriveFlags{filter: pipeline.RedriveFilter{Pipeline: name}, bulkFlags: bulkFlags{dryRun: true, rate: 2, wait: true}}
	if err := redriveBulk(ctx, &out, store, wf, window, f); err != nil || !strings.HasPrefix(out.String(), "3 failed tasks would be redriven\n") {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	out.Reset()
	f.dryRun, f.key = false, testenv.Unique("cli-bulk-")
	if err := redriveBulk(ctx, &out, store, wf, window, f); err != nil {
		t.Fatalf("bulk: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "3/3 redriven=3 skipped=0 errors=0\n") {
		t.Fatalf("progress lines:\n%s", out.String())
	}
	for _, id := range ids {
		if err := wf.Wait(ctx, id); err != nil {
			t.Fatalf("redriven task %s: %v", id, err)
		}
	}
	if err := redriveOne(ctx, &out, store, wf, window, ids[0], ""); err == nil || !strings.Contains(err.Error(), "succeeded") {
		t.Fatalf("redrive of a succeeded task: %v", err)
	}
}
