package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

var videoInput = map[string]any{"product_images": []any{"https://cos.example/p/1.jpg"}, "background_music": "https://cos.example/m.mp3"}

// failAtSCF runs a collection video task whose second step (the SCF function) fails, waits for
// its workflow to close, and switches the function back on.
func (h *pipelineEnv) failAtSCF(name string) (taskID, user string) {
	h.t.Helper()
	h.vendors.SetMode("scf", vendors.ModeFail)
	taskID, user = h.startTask(name, videoInput)
	if task := h.waitTask(taskID, time.Minute); task["status"] != pipeline.StatusFailed {
		h.t.Fatalf("task %s: %v", taskID, task)
	}
	_ = h.waitWorkflow(taskID)
	h.vendors.SetMode("scf", vendors.ModeOK)
	return taskID, user
}

// redrive posts a task's redrive with an Idempotency-Key and checks the status.
func (h *pipelineEnv) redrive(taskID, key string, want int) map[string]any {
	h.t.Helper()
	hdr := map[string]string{"X-API-Key": h.AdminKey}
	if key != "" {
		hdr["Idempotency-Key"] = key
	}
	return h.doRaw("POST", "/api/v1/pipeline-tasks/"+taskID+"/redrive", nil, want, hdr)
}

// A 3-step pipeline that failed at step 2 is redriven after the function recovers: it succeeds,
// step 1's vendor was called once in all, the quota is net one unit, the task id is unchanged and
// the task records the redrive. A repeated request is answered with the same redrive, and a
// redrive of the now succeeded task is a conflict.
func TestRedriveContinuesFromTheFailedStep(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("collection_video_pipeline.json", nil)
	id, user := h.failAtSCF(name)
	if q := quotaOf(h, user); q["remaining"] != float64(1) || q["refunded"] != float64(1) {
		t.Fatalf("quota after the failure: %v", q)
	}

	out := h.redrive(id, "redrive-1", http.StatusCreated)
	if out["task_id"] != id || out["redrive_count"] != float64(1) {
		t.Fatalf("redrive answer: %v", out)
	}
	rd := out["redrive"].(map[string]any)
	if rd["from_step"] != float64(1) || rd["recharged"] != true {
		t.Fatalf("redrive entry: %v", rd)
	}
	mustContain(t, rd["previous_error"], `Step "step2_video_composite" failed`)
	if again := h.redrive(id, "redrive-1", http.StatusOK); again["redrive_count"] != float64(1) {
		t.Fatalf("repeated redrive: %v", again)
	}

	task := h.waitTask(id, time.Minute)
	if err := h.waitWorkflow(id); err != nil || task["status"] != pipeline.StatusSuccess {
		t.Fatalf("redriven task %v (workflow: %v)", task, err)
	}
	if n := h.vendors.Calls("tencent_cloud_infinite", "/image/cutout"); n != 1 {
		t.Fatalf("step 1's vendor was called %d times, want 1", n)
	}
	steps := stepsOf(task)
	mustContain(t, steps[1]["output"].(map[string]any)["video_url"], "/scf/video-compositor/"+id+"-1.mp4")
	if task["error_reason"] != "" || task["redrive_count"] != float64(1) || len(task["redrives"].([]any)) != 1 {
		t.Fatalf("task after the redrive: %v", task)
	}
	if q := quotaOf(h, user); q["remaining"] != float64(0) || q["consumed"] != float64(2) || q["refunded"] != float64(1) {
		t.Fatalf("quota after the redrive (want net one unit): %v", q)
	}
	h.redrive(id, "redrive-1", http.StatusOK) // the same redrive, after its run succeeded
	h.redrive(id, "", http.StatusConflict)
	h.record(id, "collection_video_redriven")
}

// A redrive is refused: 404 for an unknown task, 409 for a running or succeeded one, 402 when
// the refunded unit cannot be charged again (and nothing changes), 400 for a bad key.
func TestRedriveRefusals(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{CallbackDelay: 2 * time.Second})
	h.redrive(pipeline.NewTaskID(), "", http.StatusNotFound)

	ok, _ := h.startTask(h.publish("basic_clean_pipeline.json", nil), map[string]any{"input_image": "https://cos.example/a.jpg"})
	h.waitTask(ok, time.Minute)
	out := h.redrive(ok, "", http.StatusConflict)
	mustContain(t, out["error"].(map[string]any)["message"], "succeeded")

	id, user := h.failAtSCF(h.publish("collection_video_pipeline.json", nil))
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 0}, 200)
	h.redrive(id, "k", http.StatusPaymentRequired)
	task := h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200)
	if task["status"] != pipeline.StatusFailed || task["redrive_count"] != float64(0) {
		t.Fatalf("a refused redrive changed the task: %v", task)
	}
	h.redrive(id, "bad key", http.StatusBadRequest)

	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	h.redrive(id, "k", http.StatusCreated)
	h.redrive(id, "other", http.StatusConflict) // running
	h.waitTask(id, time.Minute)
}

// Past PIPELINE_REDRIVE_WINDOW a failed task is gone for redrive.
func TestRedriveWindow(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{}, func(c *config.Config) { c.Pipeline.RedriveWindow = time.Millisecond })
	id, _ := h.failAtSCF(h.publish("collection_video_pipeline.json", nil))
	out := h.redrive(id, "", http.StatusGone)
	mustContain(t, out["error"].(map[string]any)["message"], "more than 1ms ago")
}

// A bulk dry run counts the filtered failed tasks; running the same bulk key twice redrives each
// once; the operation reports progress and every outcome.
func TestBulkRedrive(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("collection_video_pipeline.json", func(d map[string]any) {
		d["name"] = testenv.Unique("bulk_video_")
	})
	var ids []string
	for range 3 {
		id, _ := h.failAtSCF(name)
		ids = append(ids, id)
	}
	other, _ := h.failAtSCF(h.publish("collection_video_pipeline.json", nil)) // another pipeline: not selected

	body := map[string]any{"filter": map[string]any{"pipeline": name, "error": "VIDEO RENDER"}, "dry_run": true}
	dry := h.do("POST", "/api/v1/pipeline-tasks/redrive", body, 200)
	if dry["count"] != float64(3) || len(dry["sample"].([]any)) != 3 {
		t.Fatalf("dry run: %v", dry)
	}
	h.do("POST", "/api/v1/pipeline-tasks/redrive", map[string]any{"filter": map[string]any{"failed_since": "yesterday"}, "dry_run": true}, 400)

	body["dry_run"], body["rate_per_second"] = false, 2 // two batches, a timer between them
	key := map[string]string{"X-API-Key": h.AdminKey, "Idempotency-Key": testenv.Unique("bulk-")}
	run := h.doRaw("POST", "/api/v1/pipeline-tasks/redrive", body, http.StatusAccepted, key)
	bulkID := run["bulk_id"].(string)
	var progress map[string]any
	e2e.Eventually(t, time.Minute, "the bulk redrive finishes", func() bool {
		progress = h.do("GET", "/api/v1/pipeline-tasks/redrive/"+bulkID, nil, 200)
		return progress["finished"] == true
	})
	if progress["total"] != float64(3) || progress["redriven"] != float64(3) || len(progress["outcomes"].([]any)) != 3 {
		t.Fatalf("progress: %v", progress)
	}
	again := h.doRaw("POST", "/api/v1/pipeline-tasks/redrive", body, http.StatusOK, key)
	if again["bulk_id"] != bulkID || again["started"] != false {
		t.Fatalf("repeated bulk: %v", again)
	}
	body["filter"] = map[string]any{"pipeline": name}
	h.doRaw("POST", "/api/v1/pipeline-tasks/redrive", body, http.StatusConflict, key)

	for _, id := range ids {
		task := h.waitTask(id, time.Minute)
		if task["status"] != pipeline.StatusSuccess || task["redrive_count"] != float64(1) {
			t.Fatalf("task %s: %v", id, task)
		}
		rd := task["redrives"].([]any)[0].(map[string]any)
		if rd["bulk_id"] != bulkID || rd["id"] != pipeline.BulkRedriveID(bulkID) {
			t.Fatalf("task %s redrive %v", id, rd)
		}
	}
	if task := h.do("GET", "/api/v1/pipeline-tasks/"+other, nil, 200); task["status"] != pipeline.StatusFailed {
		t.Fatalf("a task outside the filter was redriven: %v", task)
	}
	recordBulk(h, bulkID)
}

// recordBulk waits for the bulk redrive's workflow to close and records its history.
func recordBulk(h *pipelineEnv, bulkID string) {
	h.t.Helper()
	ctx := h.Context()
	if err := h.Platform.Temporal.GetWorkflow(ctx, pipelinewf.BulkRedrive.WorkflowID(bulkID), "").Get(ctx, nil); err != nil {
		h.t.Fatalf("bulk workflow: %v", err)
	}
	histories.Record(h.t, h.Platform.Temporal, "pipeline", pipelinewf.BulkRedrive.WorkflowID(bulkID), "", "redrive_bulk_three_tasks")
}
