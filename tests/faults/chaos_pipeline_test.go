//go:build chaos

package faults_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Fault: the worker dies while pipelines run and a new one starts 2 s later. Load: 20 runs of
// the example 1-step sync_api pipeline posted over HTTP; the worker is stopped right after the
// posts. Must hold: every accepted run finishes successfully, the vendor endpoint was called
// exactly once per run (no completed vendor call repeated), and the quota was charged once per
// run with no refund.
func TestWorkerDeathMidPipelineFinishesEveryRunOnce(t *testing.T) {
	env, vend, store := pipelineFaultEnv(t, vendors.Options{})
	ctx := env.Context()
	const runs, quota = 20, 1000
	user, feature := testenv.Unique("chaos-user-"), "chaos-feature"
	if _, err := store.SetQuota(ctx, user, feature, quota); err != nil {
		t.Fatal(err)
	}
	tasks := postPipelineRuns(t, env, runs, "basic_clean_pipeline", user, feature, func(i int) map[string]any {
		return map[string]any{"input_image": fmt.Sprintf("https://cos.example/chaos/%d.jpg", i)}
	})
	env.StopWorker()
	time.Sleep(2 * time.Second)
	env.StartWorker()

	awaitPipelinesSucceeded(t, env, store, tasks)
	if n := vend.Calls("tencent_cloud_infinite", "/image/process"); n != runs {
		t.Errorf("vendor called %d times for %d runs", n, runs)
	}
	left := quotaLeft(t, env, store, user, feature)
	if left != quota-runs {
		t.Errorf("quota remaining %d, want %d (charged once per run, no refund)", left, quota-runs)
	}
	t.Logf("%d pipelines across a worker death: all succeeded, %d vendor calls, quota %d", runs, runs, left)
}
