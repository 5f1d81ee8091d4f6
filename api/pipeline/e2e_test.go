package pipeline_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// The three example pipelines of testdata/pipelines, unchanged, end to end against the fakes.
func TestExamplePipelinesEndToEnd(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{PollsToComplete: 1})

	t.Run("basic_clean_pipeline", func(t *testing.T) {
		name := h.publish("basic_clean_pipeline.json", nil)
		id, user := h.startTask(name, map[string]any{"input_image": "https://cos.example/in/shirt.jpg"})
		task := h.waitTask(id, time.Minute)
		if task["status"] != pipeline.StatusSuccess {
			t.Fatalf("task: %v", task)
		}
		st := stepsOf(task)[0]
		out := st["output"].(map[string]any)
		if st["status"] != "success" || st["provider_ref"] != "tencent_cloud_infinite" || out["processing_time"] != 3.2 {
			t.Fatalf("step: %v", st)
		}
		mustContain(t, out["result_url"], "/tencent_cloud_infinite/processed/shirt.jpg")
		if ops := st["input"].(map[string]any)["operations"].([]any); len(ops) != 3 {
			t.Fatalf("literal array input lost: %v", st["input"])
		}
		for _, f := range []string{"started_at", "completed_at", "step_name", "input"} {
			if st[f] == nil {
				t.Fatalf("step lacks %s: %v", f, st)
			}
		}
		if q := quotaOf(h, user); q["remaining"] != 0.0 {
			t.Fatalf("a successful task keeps its unit consumed: %v", q)
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		h.record(id, "basic_clean_success")
	})

	// Three sync steps: each step's activity records its row in one write and chooses the next
	// step's providers; the last one finishes the task, so a step costs one
	// activity and one write.
	t.Run("three_sync_steps", func(t *testing.T) {
		name := h.publish("basic_clean_pipeline.json", func(d map[string]any) {
			d["name"] = "basic_clean_three_steps"
			sc := d["schema"].(map[string]any)
			step := sc["steps"].([]any)[0].(map[string]any)
			var steps []any
			for i := range 3 {
				s := map[string]any{}
				for k, v := range step {
					s[k] = v
				}
				s["name"] = fmt.Sprintf("%s_%d", step["name"], i+1)
				steps = append(steps, s)
			}
			sc["steps"] = steps
		})
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/in/shirt.jpg"})
		task := h.waitTask(id, time.Minute)
		if task["status"] != pipeline.StatusSuccess {
			t.Fatalf("task: %v", task)
		}
		steps := stepsOf(task)
		if len(steps) != 3 {
			t.Fatalf("steps: %v", steps)
		}
		for i, st := range steps {
			if st["status"] != "success" || st["step_name"] != fmt.Sprintf("image_processing_%d", i+1) ||
				st["started_at"] == nil || st["completed_at"] == nil || st["provider_ref"] == "" || st["output"] == nil {
				t.Fatalf("step %d: %v", i, st)
			}
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		h.record(id, "three_sync_steps_success")
	})

	t.Run("model_pose12_pipeline", func(t *testing.T) {
		name := h.publish("model_pose12_pipeline.json", nil)
		id, _ := h.startTask(name, map[string]any{"input_image": "https://cos.example/in/model.jpg", "model_type": "female_asian", "style": "street"})
		task := h.waitTask(id, 2*time.Minute)
		if task["status"] != pipeline.StatusSuccess {
			t.Fatalf("task: %v", task)
		}
		st := stepsOf(task)[0]
		out := st["output"].(map[string]any)
		if out["status"] != "success" || len(out["result_urls"].([]any)) != 12 || out["vendor_task_id"] == "" || st["vendor_task_id"] != out["vendor_task_id"] {
			t.Fatalf("step: %v", st)
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		h.record(id, "model_pose12_success")
	})

	t.Run("collection_video_pipeline", func(t *testing.T) {
		name := h.publish("collection_video_pipeline.json", nil)
		id, _ := h.startTask(name, map[string]any{"product_images": []any{"https://cos.example/p/1.jpg", "https://cos.example/p/2.jpg"},
			"background_music": "https://cos.example/music/bgm.mp3"})
		task := h.waitTask(id, time.Minute)
		if task["status"] != pipeline.StatusSuccess {
			t.Fatalf("task: %v", task)
		}
		steps := stepsOf(task)
		if len(steps) != 3 {
			t.Fatalf("steps: %v", steps)
		}
		cut := steps[0]["output"].(map[string]any)["cutout_urls"].([]any)
		scfIn := steps[1]["input"].(map[string]any)
		if len(cut) != 2 || len(scfIn["image_urls"].([]any)) != 2 || scfIn["template"] != "collection_showcase" {
			t.Fatalf("step 1 did not get step 0's array: %v", scfIn)
		}
		video := steps[1]["output"].(map[string]any)["video_url"]
		mustContain(t, video, "/scf/video-compositor/"+id+"-1.mp4")
		wm := steps[2]["input"].(map[string]any)
		if wm["video_url"] != video || wm["watermark_url"] != "https://fake-cos.example/brand/watermark.png" {
			t.Fatalf("step 2 input: %v", wm)
		}
		mustContain(t, steps[2]["output"].(map[string]any)["final_video_url"], "/tencent_cloud_vod/watermarked/")
		if cbs := h.vendors.Callbacks(); len(cbs) == 0 || cbs[len(cbs)-1].Status != 200 {
			t.Fatalf("fake SCF callbacks: %+v", cbs)
		}
		if err := h.waitWorkflow(id); err != nil {
			t.Fatal(err)
		}
		h.record(id, "collection_video_success")
	})
}
