package vendors

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
)

func startFake(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func call(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestProvidersAnswerTheExampleEndpoints(t *testing.T) {
	s := startFake(t, Options{PollsToComplete: 2})
	base := s.URL + "/tencent_cloud_infinite"
	code, out := call(t, "POST", base+"/image/process", map[string]any{"image_url": "https://x/a.jpg"})
	if code != 200 || !strings.HasSuffix(out["data"].(map[string]any)["output_url"].(string), "/a.jpg") {
		t.Fatalf("process: %d %v", code, out)
	}
	code, out = call(t, "POST", base+"/image/cutout", map[string]any{"image_urls": []string{"a", "b"}})
	if code != 200 || len(out["data"].(map[string]any)["results"].([]any)) != 2 {
		t.Fatalf("cutout: %d %v", code, out)
	}
	rh := s.URL + "/runninghub"
	code, out = call(t, "POST", rh+"/workflow/execute", map[string]any{"image_url": "a"})
	id, _ := out["task_id"].(string)
	if code != 200 || id == "" {
		t.Fatalf("execute: %d %v", code, out)
	}
	if _, out = call(t, "GET", rh+"/workflow/status/"+id, nil); out["status"] != "processing" {
		t.Fatalf("first poll: %v", out)
	}
	if _, out = call(t, "GET", rh+"/workflow/status/"+id, nil); out["status"] != "success" || len(out["output_images"].([]any)) != 12 {
		t.Fatalf("second poll: %v", out)
	}
	if code, _ = call(t, "GET", s.URL+"/stable_diffusion_api/workflow/status/"+id, nil); code != 404 {
		t.Fatalf("another provider must not know the job: %d", code)
	}
	code, _ = call(t, "POST", s.URL+"/tencent_cloud_vod/video/watermark", map[string]any{"video_url": "v.mp4"})
	if code != 200 || s.Calls("runninghub", "/workflow/status") != 2 || s.Calls("runninghub", "/workflow/execute") != 1 {
		t.Fatalf("counts wrong: %d", code)
	}
	if code, _ = call(t, "POST", s.URL+"/"+FailingVendor+"/image/process", map[string]any{"image_url": "a"}); code != 503 {
		t.Fatalf("failing vendor answered %d", code)
	}
	if code, _ = call(t, "GET", s.URL+"/"+FailingVendor+"/health", nil); code != 503 {
		t.Fatalf("failing vendor health %d", code)
	}
	if code, _ = call(t, "PUT", s.URL+"/_admin/providers/"+FailingVendor+"/mode/ok", nil); code != 200 {
		t.Fatal(code)
	}
	if code, _ = call(t, "GET", s.URL+"/"+FailingVendor+"/health", nil); code != 200 {
		t.Fatalf("switched vendor health %d", code)
	}
}

func TestSlowVendorIsSlow(t *testing.T) {
	s := startFake(t, Options{SlowDelay: 300 * time.Millisecond})
	start := time.Now()
	if code, _ := call(t, "GET", s.URL+"/"+SlowVendor+"/health", nil); code != 200 {
		t.Fatal(code)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatal("slow vendor answered fast")
	}
}

func TestSCFCallsBackWithValidSignatures(t *testing.T) {
	secret := []byte("sec")
	got := make(chan error, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		v := pipeline.Verifier{Secret: secret}
		req := pipeline.CallbackRequest{TaskID: "t1", StepIndex: "1", Timestamp: r.Header.Get(pipeline.HeaderTimestamp),
			Signature: r.Header.Get(pipeline.HeaderSignature), Body: body}
		err := v.Verify(req)
		if err == nil {
			req.Signature, req.Signature256 = "", r.Header.Get(pipeline.HeaderSignature256)
			err = v.Verify(req)
		}
		got <- err
	}))
	defer backend.Close()
	s := startFake(t, Options{Secret: secret})
	code, _ := call(t, "POST", s.URL+"/scf/"+SCFCompositor, map[string]any{"task_id": "t1", "step_index": 1,
		"input": map[string]any{"image_urls": []string{"a"}}, "callback_url": backend.URL + "/cb"})
	if code != 202 {
		t.Fatalf("invoke: %d", code)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("callback signature: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no callback")
	}
	if s.Calls("scf", SCFCompositor) != 1 {
		t.Fatal("scf call not counted")
	}
}
