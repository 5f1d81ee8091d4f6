package pipeline_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
)

const scfOnly = `{"name":"scf_only","version":"1.0.0","schema":{"steps":[{"name":"compose","type":"scf",
 "scf_function":"silent-compositor","input_mapping":{"images":"${input_data.images}"},
 "output_mapping":{"video_url":"$.output.video_url"},"timeout_seconds":120}],"max_execution_time":300}}`

type signed struct {
	secret    string
	ts        time.Time
	v1, v2    bool
	signBody  []byte // the body the signature covers (defaults to the sent body)
	sentBody  []byte
	taskID    string
	stepIndex string
}

func (s signed) headers() map[string]string {
	ts := strconv.FormatInt(s.ts.Unix(), 10)
	hdr := map[string]string{pipeline.HeaderTimestamp: ts}
	covered := s.signBody
	if covered == nil {
		covered = s.sentBody
	}
	if s.v1 {
		hdr[pipeline.HeaderSignature] = pipeline.SignV1([]byte(s.secret), s.taskID, s.stepIndex, ts)
	}
	if s.v2 {
		hdr[pipeline.HeaderSignature256] = pipeline.SignV2([]byte(s.secret), s.taskID, s.stepIndex, ts, covered)
	}
	return hdr
}

// The acceptance matrix: good v1, good body signature, wrong secret, expired timestamp, tampered
// body under the body signature, second (replayed) callback → 200/200/401/401/401/409. The
// signature is checked in the handler; 200/404/409 come from the workflow's update validator.
func TestCallbackStatusMatrix(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.silentFunction("silent-compositor")
	var def map[string]any
	if err := json.Unmarshal([]byte(scfOnly), &def); err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/api/v1/pipelines", def, 201)
	a, _ := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	b, _ := h.startTask("scf_only", map[string]any{"images": []any{"y"}})
	c, _ := h.startTask("scf_only", map[string]any{"images": []any{"z"}})
	for _, id := range []string{a, b, c} {
		h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	}
	body := func(url string) []byte {
		raw, _ := json.Marshal(map[string]any{"status": "success", "output": map[string]any{"video_url": url}, "error_message": nil})
		return raw
	}
	now := time.Now()
	path := func(id string) string { return "/api/internal/tasks/" + id + "/steps/0/callback" }
	cases := []struct {
		name string
		task string
		s    signed
		want int
	}{
		{"good v1 signature", a, signed{secret: testSecret, ts: now, v1: true, sentBody: body("https://v/a.mp4")}, 200},
		{"good body signature", b, signed{secret: testSecret, ts: now, v2: true, sentBody: body("https://v/b.mp4")}, 200},
		{"wrong secret", c, signed{secret: "not-the-secret", ts: now, v1: true, sentBody: body("https://v/c.mp4")}, 401},
		{"expired timestamp", c, signed{secret: testSecret, ts: now.Add(-6 * time.Minute), v1: true, sentBody: body("https://v/c.mp4")}, 401},
		{"tampered body with body signature", c, signed{secret: testSecret, ts: now, v2: true, signBody: body("https://v/c.mp4"),
			sentBody: body("https://evil/c.mp4")}, 401},
		{"second callback", a, signed{secret: testSecret, ts: now, v1: true, sentBody: body("https://v/a2.mp4")}, 409},
	}
	for _, tc := range cases {
		tc.s.taskID, tc.s.stepIndex = tc.task, "0"
		out := h.doRaw("POST", path(tc.task), tc.s.sentBody, tc.want, tc.s.headers())
		errObj, _ := out["error"].(map[string]any)
		if tc.want == 401 && (errObj["code"] != "INVALID_SIGNATURE" || errObj["message"] == "") {
			t.Fatalf("%s: 401 without a reason: %v", tc.name, out)
		}
		// The replay is refused by the update validator while the workflow runs, or as "no longer
		// running" once it has closed (TestCallbackStaleAndNotWaitingSteps pins the former).
		if d, _ := errObj["details"].(map[string]any); tc.want == 409 && d["reason"] != pipeline.ErrTypeCallbackDelivered &&
			!strings.Contains(fmt.Sprint(errObj["message"]), "no longer running") {
			t.Fatalf("%s: %v", tc.name, out)
		}
	}
	// Unknown task / step with a valid signature → 404.
	unknown := pipeline.NewTaskID()
	h.doRaw("POST", path(unknown), body("u"), 404, signed{secret: testSecret, ts: now, v1: true, taskID: unknown, stepIndex: "0", sentBody: body("u")}.headers())
	h.doRaw("POST", "/api/internal/tasks/"+c+"/steps/5/callback", body("u"), 404,
		signed{secret: testSecret, ts: now, v1: true, taskID: c, stepIndex: "5", sentBody: body("u")}.headers())

	for id, want := range map[string]string{a: "https://v/a.mp4", b: "https://v/b.mp4"} {
		task := h.waitTask(id, time.Minute)
		st := stepsOf(task)[0]
		if task["status"] != "success" || st["output"].(map[string]any)["video_url"] != want {
			t.Fatalf("task %s: %v", id, task)
		}
	}
	// c never got a valid callback: it is still waiting, and a correct one now completes it.
	if st := stepsOf(h.do("GET", "/api/v1/pipeline-tasks/"+c, nil, 200))[0]; st["status"] != "processing" {
		t.Fatalf("rejected callbacks changed the step: %v", st)
	}
	good := body("https://v/c.mp4")
	h.doRaw("POST", path(c), good, 200, signed{secret: testSecret, ts: now, v1: true, v2: true, taskID: c, stepIndex: "0", sentBody: good}.headers())
	if task := h.waitTask(c, time.Minute); task["status"] != "success" {
		t.Fatalf("task c: %v", task)
	}
	if err := h.waitWorkflow(a); err != nil {
		t.Fatal(err)
	}
	h.record(a, "scf_callback_success")
}

// A failed callback fails the step with the function's error_message.
func TestCallbackFailedStatusFailsStep(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.silentFunction("silent-compositor")
	var def map[string]any
	_ = json.Unmarshal([]byte(scfOnly), &def)
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, user := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	raw := []byte(`{"status":"failed","output":null,"error_message":"codec exploded"}`)
	h.doRaw("POST", "/api/internal/tasks/"+id+"/steps/0/callback", raw, 200,
		signed{secret: testSecret, ts: time.Now(), v2: true, taskID: id, stepIndex: "0", sentBody: raw}.headers())
	task := h.waitTask(id, time.Minute)
	mustContain(t, task["error_reason"], `Step "compose" failed: codec exploded`)
	_ = h.waitWorkflow(id)
	if q := quotaOf(h, user); q["remaining"] != 1.0 {
		t.Fatalf("quota %v", q)
	}
	bad := []byte(`{"status":"maybe"}`)
	h.doRaw("POST", "/api/internal/tasks/"+id+"/steps/0/callback", bad, 400,
		signed{secret: testSecret, ts: time.Now(), v1: true, taskID: id, stepIndex: "0", sentBody: bad}.headers())
}

// PIPELINE_CALLBACK_REQUIRE_BODY_SIGNATURE=true refuses a callback signed with v1 only.
func TestCallbackBodySignatureCanBeRequired(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{}, func(c *config.Config) { c.Pipeline.RequireBodySignature = true })
	h.silentFunction("silent-compositor")
	var def map[string]any
	_ = json.Unmarshal([]byte(scfOnly), &def)
	h.do("POST", "/api/v1/pipelines", def, 201)
	id, _ := h.startTask("scf_only", map[string]any{"images": []any{"x"}})
	h.waitStep(id, 0, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	raw := []byte(`{"status":"success","output":{"video_url":"v"}}`)
	path := "/api/internal/tasks/" + id + "/steps/0/callback"
	out := h.doRaw("POST", path, raw, 401, signed{secret: testSecret, ts: time.Now(), v1: true, taskID: id, stepIndex: "0", sentBody: raw}.headers())
	mustContain(t, out["error"].(map[string]any)["message"], "X-Internal-Signature-256")
	h.doRaw("POST", path, raw, 200, signed{secret: testSecret, ts: time.Now(), v2: true, taskID: id, stepIndex: "0", sentBody: raw}.headers())
	if task := h.waitTask(id, time.Minute); task["status"] != "success" {
		t.Fatalf("task %v", task)
	}
}

// Callbacks for a step the pipeline has left (stale), for a step it has not reached (not waiting)
// and a replayed callback are refused by the workflow's update validator with 409; the waiting
// steps still complete.
func TestCallbackStaleAndNotWaitingSteps(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	h.silentFunction("silent-compositor")
	name := h.publish("collection_video_pipeline.json", func(d map[string]any) {
		d["name"] = "collection_silent"
		steps := d["schema"].(map[string]any)["steps"].([]any)
		steps[1].(map[string]any)["scf_function"] = "silent-compositor"
		steps[2] = map[string]any{"name": "step3_second_composite", "type": "scf", "scf_function": "silent-compositor",
			"input_mapping":  map[string]any{"video": "${steps[1].output.video_url}"},
			"output_mapping": map[string]any{"video_url": "$.output.video_url"}, "timeout_seconds": 120}
	})
	id, _ := h.startTask(name, map[string]any{"product_images": []any{"https://cos.example/p/1.jpg"}, "background_music": "m"})
	h.waitStep(id, 1, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	send := func(step string, want int) map[string]any {
		raw := []byte(`{"status":"success","output":{"video_url":"https://v/` + step + `.mp4"}}`)
		return h.doRaw("POST", "/api/internal/tasks/"+id+"/steps/"+step+"/callback", raw, want,
			signed{secret: testSecret, ts: time.Now(), v2: true, taskID: id, stepIndex: step, sentBody: raw}.headers())
	}
	reason := func(out map[string]any) any {
		return out["error"].(map[string]any)["details"].(map[string]any)["reason"]
	}
	if r := reason(send("0", 409)); r != pipeline.ErrTypeCallbackStale {
		t.Fatalf("stale step: %v", r)
	}
	if r := reason(send("2", 409)); r != pipeline.ErrTypeStepNotWaiting {
		t.Fatalf("step not waiting: %v", r)
	}
	send("3", 404)
	send("1", 200)
	h.waitStep(id, 2, func(st map[string]any) bool { return st["callback_state"] == pipeline.CallbackWaiting })
	if r := reason(send("1", 409)); r != pipeline.ErrTypeCallbackDelivered {
		t.Fatalf("replayed callback: %v", r)
	}
	send("2", 200)
	task := h.waitTask(id, time.Minute)
	if task["status"] != "success" || stepsOf(task)[1]["output"].(map[string]any)["video_url"] != "https://v/1.mp4" {
		t.Fatalf("task %v", task)
	}
	if err := h.waitWorkflow(id); err != nil {
		t.Fatal(err)
	}
	send("1", 409) // the workflow has closed
}
