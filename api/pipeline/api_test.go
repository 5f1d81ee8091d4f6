package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Every malformed case of testdata/pipelines/invalid is a 400 whose message names step and field.
func TestPublishRejectsInvalidSchemas(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata", "pipelines", "invalid", "*.json"))
	if len(files) == 0 {
		t.Fatal("no invalid cases")
	}
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		want, _ := os.ReadFile(strings.TrimSuffix(f, ".json") + ".want")
		out := h.do("POST", "/api/v1/pipelines", raw, 400)
		e := out["error"].(map[string]any)
		if e["code"] != "VALIDATION_ERROR" || !strings.Contains(e["message"].(string), strings.TrimSpace(string(want))) {
			t.Errorf("%s: %v", filepath.Base(f), e)
		}
		if d, _ := e["details"].(map[string]any); d["field"] == nil {
			t.Errorf("%s: no field in details: %v", filepath.Base(f), e)
		}
	}
	h.do("POST", "/api/v1/pipelines", []byte(`{"name":`), 400)
}

func TestPipelineVersionsAreImmutable(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	raw, _ := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "pipelines", "basic_clean_pipeline.json"))
	h.do("POST", "/api/v1/pipelines", raw, 200) // same schema again: idempotent
	var d map[string]any
	_ = json.Unmarshal(raw, &d)
	d["schema"].(map[string]any)["max_execution_time"] = 120
	h.do("POST", "/api/v1/pipelines", d, 409)
	d["version"] = "1.1.0"
	h.do("POST", "/api/v1/pipelines", d, 201)
	if got := h.do("GET", "/api/v1/pipelines/"+name+"/1.0.0", nil, 200); got["schema"].(map[string]any)["max_execution_time"] != 60.0 {
		t.Fatalf("1.0.0 changed: %v", got)
	}
	if got := h.do("GET", "/api/v1/pipelines/"+name, nil, 200); len(got["versions"].([]any)) != 2 {
		t.Fatalf("versions %v", got)
	}
	if got := h.do("GET", "/api/v1/pipelines", nil, 200); len(got["pipelines"].([]any)) != 2 {
		t.Fatalf("list %v", got)
	}
	h.do("GET", "/api/v1/pipelines/nope", nil, 404)
	h.do("GET", "/api/v1/pipelines/"+name+"/9.9.9", nil, 404)
}

func TestTaskCreationErrors(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	name := h.publish("basic_clean_pipeline.json", nil)
	user := testenv.Unique("u-")
	out := h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat",
		"input_data": map[string]any{"input_image": "a"}}, 402)
	if out["error"].(map[string]any)["code"] != "QUOTA_EXHAUSTED" {
		t.Fatalf("%v", out)
	}
	h.do("PUT", "/api/v1/quotas/"+user+"/feat", map[string]any{"remaining": 1}, 200)
	h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": "missing", "user_id": user, "feature_id": "feat"}, 404)
	h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "feature_id": "feat"}, 400)
	h.do("POST", "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "user_id": user, "feature_id": "feat", "input_data": "x"}, 400)
	if q := quotaOf(h, user); q["remaining"] != 1.0 {
		t.Fatalf("rejected requests consumed quota: %v", q)
	}
	h.do("GET", "/api/v1/pipeline-tasks/"+"0123456789abcdef01234567", nil, 404)
	h.doRaw("GET", "/api/v1/pipelines", nil, 401, nil)
}

func TestProviderAndFunctionRegistry(t *testing.T) {
	t.Parallel()
	h := newEnv(t, vendors.Options{})
	p := h.do("PUT", "/api/v1/providers/acme_ai", map[string]any{"base_url": "https://acme.example/api/", "auth_header": "Authorization",
		"auth_value": "Bearer s3cret"}, 200)
	if p["base_url"] != "https://acme.example/api" || p["health"].(map[string]any)["status"] != "up" {
		t.Fatalf("provider %v", p)
	}
	raw, _ := json.Marshal(h.do("GET", "/api/v1/providers/acme_ai", nil, 200))
	if strings.Contains(string(raw), "s3cret") {
		t.Fatal("the auth value leaked")
	}
	h.do("PUT", "/api/v1/providers/acme_ai", map[string]any{"base_url": "not a url"}, 400)
	h.do("PUT", "/api/v1/providers/acme_ai/health", map[string]any{"status": "sideways"}, 400)
	if hh := h.do("PUT", "/api/v1/providers/acme_ai/health", map[string]any{"status": "degraded"}, 200); hh["status"] != "degraded" || hh["pinned"] != true {
		t.Fatalf("health %v", hh)
	}
	if hh := h.do("PUT", "/api/v1/providers/acme_ai/health", map[string]any{"status": "auto"}, 200); hh["pinned"] != false {
		t.Fatalf("health %v", hh)
	}
	h.do("PUT", "/api/v1/providers/ghost/health", map[string]any{"status": "down"}, 404)
	h.do("GET", "/api/v1/providers/ghost", nil, 404)
	if list := h.do("GET", "/api/v1/providers", nil, 200); len(list["providers"].([]any)) != len(h.vendors.Providers())+1 {
		t.Fatalf("providers %v", list)
	}
	h.do("PUT", "/api/v1/functions/mixer", map[string]any{"invoke_url": "http://127.0.0.1:1/f"}, 200)
	h.do("GET", "/api/v1/functions/mixer", nil, 200)
	h.do("GET", "/api/v1/functions/none", nil, 404)
	h.do("PUT", "/api/v1/functions/mixer", map[string]any{}, 400)
}
