package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// The hostile requests of an API security review, each sent as it was when it got through:
// every one must get a quick 4xx in the error envelope, naming what is wrong, and change nothing.
func TestHostileInput(t *testing.T) {
	env := e2e.New(t)
	for name, attack := range map[string]func(*testing.T, *e2e.Env){
		"pipeline task with input_data 10,000 deep": attackDeepPipelineInput,
		"submit with meta 10,000 deep":              attackDeepSubmitMeta,
		"publish with a schema 10,000 deep":         attackDeepSchema,
		"apply with metadata 10,000 deep":           attackDeepApplyMetadata,
		"600,000-element array":                     attackHugeArray,
		"thousands of invalid elements":             attackManyInvalidTasks,
		"pull/batch with 100,000 ids":               attackHugePullBatch,
		"page 100000000000000000":                   attackHugePage,
		"keys repeated in another case":             attackCaseDuplicateKeys,
	} {
		t.Run(name, func(t *testing.T) { attack(t, env) })
	}
}

// deep is `{"a":{"a":…1…}}` n levels deep.
func deep(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
}

// refused sends body and asserts a 400 VALIDATION_ERROR, answered within a second, whose
// field starts with fieldPrefix; it returns the error's details.
func refused(t *testing.T, env *e2e.Env, path string, body any, fieldPrefix string) map[string]any {
	t.Helper()
	start := time.Now()
	r := env.Do(http.MethodPost, path, env.AdminKey, body)
	if took := time.Since(start); took > time.Second {
		t.Errorf("POST %s answered after %v", path, took)
	}
	return wantValidation(t, r, fieldPrefix)
}

func wantValidation(t *testing.T, r *e2e.Response, fieldPrefix string) map[string]any {
	t.Helper()
	var out struct {
		Success bool
		Error   struct {
			Code    string
			Details map[string]any
		}
	}
	r.JSON(t, &out)
	field, _ := out.Error.Details["field"].(string)
	if r.Status != http.StatusBadRequest || out.Success || out.Error.Code != "VALIDATION_ERROR" || !strings.HasPrefix(field, fieldPrefix) {
		t.Fatalf("got %d %.400s; want 400 VALIDATION_ERROR naming %s…", r.Status, r.Body, fieldPrefix)
	}
	return out.Error.Details
}

func attackDeepPipelineInput(t *testing.T, env *e2e.Env) {
	refused(t, env, "/api/v1/pipeline-tasks", map[string]any{"pipeline": "hostile", "user_id": "u", "feature_id": "f",
		"input_data": deep(10_000)}, "input_data.a.a")
}

func attackDeepSubmitMeta(t *testing.T, env *e2e.Env) {
	refused(t, env, "/api/v1/submit", map[string]any{"project_id": "hostile-meta", "project_name": "p", "tasks": []any{},
		"meta": deep(10_000)}, "meta.a.a")
	if r := env.Do(http.MethodGet, "/api/v1/projects/hostile-meta", env.AdminKey, nil); r.Status != http.StatusNotFound {
		t.Errorf("the refused submit left a project: %d %s", r.Status, r.Body)
	}
}

func attackDeepSchema(t *testing.T, env *e2e.Env) {
	refused(t, env, "/api/v1/pipelines", map[string]any{"name": "hostile", "version": "1",
		"steps": []any{map[string]any{"name": "s", "input_mapping": deep(10_000)}}}, "steps[0].input_mapping.a")
}

func attackDeepApplyMetadata(t *testing.T, env *e2e.Env) {
	refused(t, env, "/api/workflows/apply", map[string]any{"workflowId": "echo", "content": "hi", "idempotencyKey": "hostile-1",
		"metadata": deep(10_000)}, "metadata.a.a")
}

func attackHugeArray(t *testing.T, env *e2e.Env) {
	body := []byte(`{"project_id":"hostile-array","project_name":"p","tasks":[` +
		strings.TrimSuffix(strings.Repeat(`{},`, 600_000), ",") + `]}`)
	r := env.Do(http.MethodPost, "/api/v1/submit", env.AdminKey, body)
	d := wantValidation(t, r, "tasks")
	if d["limit"] != float64(httpx.MaxJSONArrayElements) || len(r.Body) > 2048 {
		t.Errorf("a %d-byte answer with details %v; want a short one giving the cap", len(r.Body), d)
	}
}

// A body within the limits whose every element is wrong is answered with the first problems and
// their count, not with every one.
func attackManyInvalidTasks(t *testing.T, env *e2e.Env) {
	tasks := make([]map[string]any, 5_000)
	for i := range tasks {
		tasks[i] = map[string]any{"status": "not-a-status"}
	}
	r := env.Do(http.MethodPost, "/api/v1/submit", env.AdminKey,
		map[string]any{"project_id": "hostile-many", "project_name": "p", "queue_id": "q", "queue_name": "q", "tasks": tasks})
	d := wantValidation(t, r, "tasks[0]")
	listed, _ := d["all_errors"].([]any)
	count, _ := d["error_count"].(float64)
	if len(listed) != httpx.MaxProblemsListed || count < 5_000 || len(r.Body) > 8<<10 {
		t.Errorf("%d bytes listing %d of %v problems; want %d listed, all counted, a short body", len(r.Body), len(listed), count, httpx.MaxProblemsListed)
	}
}

func attackHugePullBatch(t *testing.T, env *e2e.Env) {
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "t" + strings.Repeat("0", i%3)
		}
		return out
	}
	const path = "/api/v1/projects/hostile-pull/tasks/pull/batch"
	d := refused(t, env, path, map[string]any{"taskIds": ids(100_000)}, "taskIds")
	if d["limit"] != float64(httpx.MaxJSONArrayElements) {
		t.Errorf("details %v do not give the cap", d)
	}
	// Within the JSON limits, a pull still never takes more ids than a pull hands out, as
	// confirm/release.
	d = refused(t, env, path, map[string]any{"taskIds": ids(101)}, "taskIds")
	if d["limit"] != float64(100) {
		t.Errorf("details %v do not give pull_batch_size", d)
	}
}

func attackHugePage(t *testing.T, env *e2e.Env) {
	for _, path := range []string{"/api/v1/projects", "/api/v1/api-keys", "/api/v1/audit",
		"/api/v1/projects/p/tasks", "/api/v1/projects/p/queues", "/api/v1/projects/p/queues/q/tasks"} {
		r := env.Do(http.MethodGet, path+"?page=100000000000000000&pageSize=100", env.AdminKey, nil)
		if d := wantValidation(t, r, "page"); d["field"] != "page" {
			t.Errorf("%s: names %v", path, d["field"])
		}
	}
}

func attackCaseDuplicateKeys(t *testing.T, env *e2e.Env) {
	refused(t, env, "/api/v1/pipeline-tasks", json.RawMessage(`{"pipeline":"p","user_id":"a","feature_id":"f","USER_ID":"b"}`), "USER_ID")
}

// /readyz answers quickly while hostile bodies arrive on other connections: refusing them costs
// a bounded walk, not a blocked server.
func TestReadyzStaysFastUnderHostileInput(t *testing.T) {
	env := e2e.New(t)
	bodies := [][]byte{
		[]byte(`{"pipeline":"p","user_id":"u","feature_id":"f","input_data":` + string(deep(10_000)) + `}`),
		[]byte(`{"project_id":"p","tasks":[` + strings.TrimSuffix(strings.Repeat(`{},`, 600_000), ",") + `]}`),
	}
	paths := []string{"/api/v1/pipeline-tasks", "/api/v1/submit"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, env.API.URL+paths[i%2], bytes.NewReader(bodies[i%2]))
				req.Header.Set("X-API-Key", env.AdminKey)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(200 * time.Millisecond) // let the hostile traffic start
	var slowest time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		r := env.Do(http.MethodGet, "/readyz", "", nil)
		took := time.Since(start)
		if r.Status != http.StatusOK {
			t.Fatalf("/readyz %d %s under hostile input", r.Status, r.Body)
		}
		slowest = max(slowest, took)
		time.Sleep(50 * time.Millisecond)
	}
	if slowest > 1500*time.Millisecond {
		t.Errorf("/readyz took up to %v while hostile bodies ran", slowest)
	}
	t.Logf("slowest /readyz under hostile input: %v", slowest)
}
