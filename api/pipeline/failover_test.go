package pipeline_test

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
)

// A primary marked down by hand is skipped; the backup serves and is recorded.
func TestPrimaryDownBackupServes(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	h.do("PUT", "/api/v1/providers/tencent_cloud_infinite/health", map[string]any{"status": "down"}, 200)
	id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
	task := h.waitTask(id, time.Minute)
	st := stepsOf(task)[0]
	if task["status"] != "success" || st["provider_ref"] != "aliyun_image_ai" {
		t.Fatalf("task %v step %v", task["status"], st)
	}
	mustContain(t, st["output"].(map[string]any)["result_url"], "/aliyun_image_ai/")
	if n := h.vendors.Calls("tencent_cloud_infinite", "/image/process"); n != 0 {
		t.Fatalf("the down primary was called %d times", n)
	}
	var m dto.Metric
	if err := h.metrics().VendorCalls.WithLabelValues("aliyun_image_ai", "ok").Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Fatalf("vendor call metric %v %v", m.GetCounter().GetValue(), err)
	}
}

// A primary that is "up" but fails every call is retried per the schema, then the next healthy
// candidate serves (fall-through after the step's retries).
func TestFailingPrimaryFallsThroughAfterRetries(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.vendors.SetMode("tencent_cloud_infinite", vendors.ModeFail)
	name := h.publish("basic_clean_pipeline.json", func(d map[string]any) {
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["retry"] = map[string]any{"max_attempts": 2, "delay_seconds": 0}
	})
	id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
	task := h.waitTask(id, time.Minute)
	st := stepsOf(task)[0]
	if task["status"] != "success" || st["provider_ref"] != "aliyun_image_ai" {
		t.Fatalf("task %v step %v", task, st)
	}
	if n := h.vendors.Calls("tencent_cloud_infinite", "/image/process"); n != 2 {
		t.Fatalf("primary called %d times, want retry.max_attempts=2", n)
	}
	if tried := st["providers_tried"].([]any); len(tried) != 2 {
		t.Fatalf("providers_tried %v", tried)
	}
}

// Every candidate down: the step fails with the reason, later nothing runs, and the quota comes
// back exactly once.
func TestAllProvidersDownFailsAndRefundsOnce(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	for _, ref := range []string{"tencent_cloud_infinite", "aliyun_image_ai"} {
		h.do("PUT", "/api/v1/providers/"+ref+"/health", map[string]any{"status": "down"}, 200)
	}
	id, user := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
	task := h.waitTask(id, time.Minute)
	if err := h.waitWorkflow(id); err == nil {
		t.Fatal("the workflow of a failed pipeline must end failed")
	}
	if task["status"] != "failed" {
		t.Fatalf("task %v", task)
	}
	task = h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200)
	mustContain(t, task["error_reason"], `Step "image_processing" failed: all providers unavailable: tencent_cloud_infinite (down), aliyun_image_ai (down)`)
	if task["refunded"] != true {
		t.Fatalf("task not marked refunded: %v", task)
	}
	st := stepsOf(task)[0]
	if st["status"] != "failed" || st["error_message"] == nil || st["completed_at"] == nil {
		t.Fatalf("step %v", st)
	}
	q := quotaOf(h, user)
	ledger := q["ledger"].([]any)
	if q["remaining"] != 1.0 || q["refunded"] != 1.0 || len(ledger) != 1 || ledger[0].(map[string]any)["refunded"] != true {
		t.Fatalf("quota %v", q)
	}
	// Refunding again (a retried activity) changes nothing.
	h.activities().PipelineRefundQuota(t.Context(), refundReq(id, user))
	if q := quotaOf(h, user); q["remaining"] != 1.0 || q["refunded"] != 1.0 {
		t.Fatalf("second refund applied: %v", q)
	}
	h.record(id, "basic_clean_all_down")
	if n := h.vendors.Calls("tencent_cloud_infinite", "/image/process") + h.vendors.Calls("aliyun_image_ai", "/image/process"); n != 0 {
		t.Fatalf("down providers were called %d times", n)
	}
}

// A failed step stops the pipeline at once: later steps are never called, the reason names the
// step, the quota is refunded.
func TestFailedStepStopsPipeline(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("collection_video_pipeline.json", nil)
	h.vendors.SetMode("scf", vendors.ModeFail)
	id, user := h.startTask(name, map[string]any{"product_images": []any{"https://cos.example/p/1.jpg"},
		"background_music": "https://cos.example/m.mp3"})
	h.waitTask(id, time.Minute)
	if err := h.waitWorkflow(id); err == nil {
		t.Fatal("workflow must end failed")
	}
	task := h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200)
	mustContain(t, task["error_reason"], `Step "step2_video_composite" failed: video render failed (fake)`)
	steps := stepsOf(task)
	if steps[0]["status"] != "success" || steps[1]["status"] != "failed" || steps[2]["status"] != "pending" {
		t.Fatalf("step statuses %v / %v / %v", steps[0]["status"], steps[1]["status"], steps[2]["status"])
	}
	if n := h.vendors.Calls("tencent_cloud_vod", "/video/watermark"); n != 0 {
		t.Fatalf("step 3 was called %d times after step 2 failed", n)
	}
	if q := quotaOf(h, user); q["remaining"] != 1.0 {
		t.Fatalf("quota not refunded: %v", q)
	}
	h.record(id, "collection_video_scf_failed")
}

// on_failure: no_refund keeps the unit consumed.
func TestNoRefundPolicy(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", func(d map[string]any) {
		d["name"] = "basic_clean_no_refund"
		d["schema"].(map[string]any)["on_failure"] = "no_refund"
	})
	for _, ref := range []string{"tencent_cloud_infinite", "aliyun_image_ai"} {
		h.do("PUT", "/api/v1/providers/"+ref+"/health", map[string]any{"status": "down"}, 200)
	}
	id, user := h.startTask(name, map[string]any{"input_image": "a"})
	if task := h.waitTask(id, time.Minute); task["status"] != "failed" {
		t.Fatalf("task %v", task)
	}
	_ = h.waitWorkflow(id)
	if q := quotaOf(h, user); q["remaining"] != 0.0 || q["refunded"] != 0.0 {
		t.Fatalf("no_refund refunded: %v", q)
	}
}

// A task whose input_data lacks a field the schema reads is refused before it consumes quota.
func TestMissingInputIsRefusedUpFront(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	user := testenv.Unique("user-")
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	out := h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat",
		"input_data": map[string]any{"wrong_field": "x"}}, 400)
	e := out["error"].(map[string]any)
	if e["details"].(map[string]any)["field"] != "input_data.input_image" {
		t.Fatalf("error %v", e)
	}
	mustContain(t, e["message"], `input_data.input_image is required by step 0 "image_processing" (input_mapping.image_url)`)
	if q := quotaOf(h, user); q["remaining"] != 1.0 || q["consumed"] != 0.0 {
		t.Fatalf("quota %v", q)
	}
}

// A mapping that cannot be rendered at run time (an env variable off the allow-list) fails the
// step before any vendor call, with a plain reason, and refunds.
func TestUnrenderableInputFailsBeforeCallingVendors(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", func(d map[string]any) {
		d["name"] = "basic_clean_secret"
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["input_mapping"].(map[string]any)["token"] = "${env.DATABASE_PASSWORD}"
	})
	id, user := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
	h.waitTask(id, time.Minute)
	_ = h.waitWorkflow(id)
	task := h.do("GET", "/api/v1/pipeline-tasks/"+id, nil, 200)
	want := `Step "image_processing" failed: input_mapping: ${env.DATABASE_PASSWORD}: environment variable DATABASE_PASSWORD is not on the allow-list (PIPELINE_ENV_ALLOWLIST) or is unset`
	if task["error_reason"] != want {
		t.Fatalf("reason %q\nwant   %q", task["error_reason"], want)
	}
	if n := h.vendors.Calls("tencent_cloud_infinite", "/image/process") + h.vendors.Calls("aliyun_image_ai", "/image/process"); n != 0 {
		t.Fatalf("vendors called %d times", n)
	}
	if q := quotaOf(h, user); q["remaining"] != 1.0 {
		t.Fatalf("quota %v", q)
	}
}

// A provider slower than the step's timeout_seconds counts as failed; the next candidate serves.
func TestSlowProviderTimesOutAndNextServes(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{SlowDelay: 3 * time.Second})
	name := h.publish("basic_clean_pipeline.json", func(d map[string]any) {
		d["name"] = "basic_clean_slow_first"
		step := d["schema"].(map[string]any)["steps"].([]any)[0].(map[string]any)
		step["provider_ref"] = vendors.SlowVendor
		step["provider_candidates"] = []any{vendors.SlowVendor, "aliyun_image_ai"}
		step["timeout_seconds"] = 1
		step["retry"] = map[string]any{"max_attempts": 1, "delay_seconds": 0}
	})
	id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/a.jpg"})
	task := h.waitTask(id, time.Minute)
	st := stepsOf(task)[0]
	if task["status"] != "success" || st["provider_ref"] != "aliyun_image_ai" {
		t.Fatalf("task %v step %v", task["status"], st)
	}
	if n := h.vendors.Calls(vendors.SlowVendor, "/image/process"); n != 1 {
		t.Fatalf("slow vendor called %d times", n)
	}
}
