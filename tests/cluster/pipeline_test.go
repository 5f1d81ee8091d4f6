//go:build cluster

package cluster_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The example pipelines `starter seed-demo` publishes (testdata/pipelines), each with the
// vendor calls one run makes exactly once: one per step, as "provider endpoint" keys of the
// fake vendors' GET /_admin/calls. A step with candidates counts on whichever served it.
type examplePipeline struct {
	name  string
	input func(i int) map[string]any
	// steps lists, per step, the call keys of its candidates.
	steps [][]string
}

var (
	// collectionVideo: a sync step, the SCF function (which calls the API back, signed), a sync step.
	collectionVideo = examplePipeline{name: "collection_video_pipeline",
		input: func(i int) map[string]any {
			return map[string]any{"product_images": []string{fmt.Sprintf("https://cos.example/cluster/%d-a.jpg", i),
				fmt.Sprintf("https://cos.example/cluster/%d-b.jpg", i)}, "background_music": "https://cos.example/bgm.mp3"}
		},
		steps: [][]string{{"tencent_cloud_infinite /image/cutout", "aliyun_image_ai /image/cutout"},
			{"scf video-compositor"}, {"tencent_cloud_vod /video/watermark"}}}
	// modelPose12: one async step, polled until the vendor's job is done.
	modelPose12 = examplePipeline{name: "model_pose12_pipeline",
		input: func(i int) map[string]any {
			return map[string]any{"input_image": fmt.Sprintf("https://cos.example/cluster/%d.jpg", i), "model_type": "pose12", "style": "studio"}
		},
		steps: [][]string{{"runninghub /workflow/execute", "stable_diffusion_api /workflow/execute"}}}
)

// vendorCalls is the fake vendors' call counts now.
func vendorCalls(t testing.TB) map[string]int {
	t.Helper()
	var calls map[string]int
	get(t, strings.TrimRight(cl.need(t, "PIPELINE_FAKE_VENDORS_URL"), "/")+"/_admin/calls", &calls)
	return calls
}

// pipelineUser makes a quota account of its own for one test: runs of other tests, and earlier
// runs of the suite on the same cluster, neither use it up nor share its counts.
func pipelineUser(t testing.TB, units int) (user, feature string) {
	t.Helper()
	user, feature = testenv.Unique("cluster-"), "cluster"
	call(t, request{method: http.MethodPut, url: cl.api(0) + "/api/v1/quotas/" + url.PathEscape(user) + "/" + feature,
		key: cl.adminKey, body: map[string]any{"remaining": units}}, http.StatusOK)
	return user, feature
}

// pipelineRun is one task to create: its Idempotency-Key and body.
type pipelineRun struct {
	key  string
	body map[string]any
}

func newRun(p examplePipeline, i int, user, feature string) pipelineRun {
	return pipelineRun{key: testenv.Unique("cluster-run-"), body: map[string]any{"pipeline": p.name, "user_id": user,
		"feature_id": feature, "input_data": p.input(i)}}
}

// create posts the run to API instance api, as a client with an Idempotency-Key does: the same
// request again on a transport error or a 5xx (after Retry-After) until it is answered, and
// returns the task id.
func (r pipelineRun) create(t testing.TB, api int) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a, err := try(request{method: http.MethodPost, url: cl.api(api) + "/api/v1/pipeline-tasks", key: cl.adminKey,
			body: r.body, header: map[string]string{"Idempotency-Key": r.key}})
		switch {
		case err == nil && (a.Status == http.StatusCreated || a.Status == http.StatusOK):
			var created struct {
				TaskID string `json:"task_id"`
			}
			a.decode(t, &created)
			return created.TaskID
		case err == nil && a.Status < 500:
			t.Fatalf("create %s: %d %s", r.key, a.Status, a.Body)
		case time.Now().After(deadline):
			t.Fatalf("create %s: not answered within 2 minutes: %v %d %s", r.key, err, a.Status, a.Body)
		}
		time.Sleep(max(retryAfter(a), 250*time.Millisecond))
		api++ // a client behind a load balancer lands on the other instance
	}
}

// pipelineTask is the part of GET /api/v1/pipeline-tasks/{id} the tests read.
type pipelineTask struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	ErrorReason string `json:"error_reason"`
	Steps       []struct {
		Status      string `json:"status"`
		ProviderRef string `json:"provider_ref"`
	} `json:"steps"`
}

func (p pipelineTask) final() bool {
	return p.Status == "success" || p.Status == "failed" || p.Status == "terminated"
}

// awaitPipelines reads the tasks over both API instances until each is final, and fails the
// test for each that did not succeed with every step succeeded.
func awaitPipelines(t testing.TB, ids []string, timeout time.Duration) {
	t.Helper()
	done := map[string]pipelineTask{}
	eventually(t, timeout, fmt.Sprintf("%d pipeline tasks to end", len(ids)), func() bool {
		for i, id := range ids {
			if _, ok := done[id]; ok {
				continue
			}
			a, err := try(request{method: http.MethodGet, url: cl.api(i) + "/api/v1/pipeline-tasks/" + id, key: cl.adminKey})
			if err != nil || a.Status != http.StatusOK {
				continue // the instance is busy with a fault; the next round asks again
			}
			var task pipelineTask
			a.decode(t, &task)
			if task.final() {
				done[id] = task
			}
		}
		return len(done) == len(ids)
	})
	for _, id := range ids {
		task := done[id]
		if task.Status != "success" {
			t.Errorf("pipeline task %s ended %s: %s", id, task.Status, task.ErrorReason)
		}
		for i, s := range task.Steps {
			if s.Status != "success" {
				t.Errorf("pipeline task %s: step %d is %s", id, i, s.Status)
			}
		}
	}
}

// assertOneCallPerStep checks that between the counts before and after, every step of the runs
// called its vendor exactly once per run: none lost, none repeated.
func assertOneCallPerStep(t testing.TB, before, after map[string]int, runs map[string]int) {
	t.Helper()
	for _, p := range []examplePipeline{collectionVideo, modelPose12} {
		n := runs[p.name]
		for i, candidates := range p.steps {
			got := 0
			for _, k := range candidates {
				got += after[k] - before[k]
			}
			if got != n {
				t.Errorf("%s step %d (%s): %d vendor calls for %d runs, want exactly one per run",
					p.name, i, strings.Join(candidates, " | "), got, n)
			}
		}
	}
}

// One pipeline with an SCF step (the fake SCF calls the API back, signed with
// INTERNAL_CALLBACK_SECRET) and one with an async step, created on one API instance and read on
// the other; each step's vendor is called once.
func TestPipelinesWithSCFCallbackAndAsyncStep(t *testing.T) {
	user, feature := pipelineUser(t, 10)
	before := vendorCalls(t)
	ids := []string{newRun(collectionVideo, 0, user, feature).create(t, 0), newRun(modelPose12, 0, user, feature).create(t, 1)}
	awaitPipelines(t, ids, 2*time.Minute)
	assertOneCallPerStep(t, before, vendorCalls(t), map[string]int{collectionVideo.name: 1, modelPose12.name: 1})
}
