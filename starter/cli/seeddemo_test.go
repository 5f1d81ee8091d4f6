package cli

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

const seedDemoSecret = "seed-demo-callback-secret"

// seed-demo against a running API, over HTTP only: the first run registers the fakes, the SCF
// function, the examples and the quota, keeping a provider an operator registered by hand; the
// second run changes nothing; a seeded example pipeline then runs to success on the fakes.
func TestSeedDemoLoadsTheDemoDataThroughTheAPI(t *testing.T) {
	vs, err := vendors.Start("127.0.0.1:0", vendors.Options{Secret: []byte(seedDemoSecret)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	env := e2e.New(t, func(c *config.Config) {
		c.Pipeline.CallbackSecret = seedDemoSecret
		c.Crawl.Consumers = false
	})
	if r := env.Do(http.MethodPut, "/api/v1/providers/"+vendors.SlowVendor, env.AdminKey,
		map[string]any{"base_url": "https://vendor.example/slow"}); r.Status != http.StatusOK {
		t.Fatalf("register a real provider: %d %s", r.Status, r.Body)
	}
	args := []string{"seed-demo", "-o", "json", "--api-url", env.API.URL, "--api-key", env.AdminKey,
		"--vendors-url", vs.URL, "--examples", filepath.Join(testenv.RepoRoot(), "testdata", "pipelines")}

	first := runSeedDemo(t, args)
	providers, functions := pipelinedemo.Registrations(vs.URL)
	examples, _ := pipelinedemo.Examples(filepath.Join(testenv.RepoRoot(), "testdata", "pipelines"))
	if want := len(providers) + len(functions) + len(examples) + 1; len(first) != want {
		t.Fatalf("first run: %d items, want %d: %+v", len(first), want, first)
	}
	for _, row := range first {
		want := stateCreated
		if row.Kind == "provider" && row.Name == vendors.SlowVendor {
			want = stateKept
		}
		if row.State != want {
			t.Errorf("first run: %s %s is %s (%s), want %s", row.Kind, row.Name, row.State, row.Detail, want)
		}
	}
	for _, row := range runSeedDemo(t, args) {
		if row.State != stateUnchanged && row.State != stateKept {
			t.Errorf("second run changed %s %s: %s", row.Kind, row.Name, row.State)
		}
	}
	if r := env.Do(http.MethodGet, "/api/v1/providers/"+vendors.SlowVendor, env.AdminKey, nil); r.Map(t)["base_url"] != "https://vendor.example/slow" {
		t.Fatalf("seeding overwrote the hand-registered provider: %s", r.Body)
	}

	r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
		"pipeline": "basic_clean_pipeline", "user_id": pipelinedemo.DevQuotaUser, "feature_id": pipelinedemo.DevQuotaFeature,
		"input_data": map[string]any{"input_image": "https://cos.example/p/1.jpg"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("run a seeded example: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["task_id"].(string)
	var task map[string]any
	e2e.Eventually(t, time.Minute, "the seeded example finishes", func() bool {
		task = env.Do(http.MethodGet, "/api/v1/pipeline-tasks/"+id, env.AdminKey, nil).Map(t)
		return task["status"] == pipeline.StatusSuccess || task["status"] == pipeline.StatusFailed
	})
	if task["status"] != pipeline.StatusSuccess {
		t.Fatalf("seeded example: %v", task)
	}
}

// Without an admin key seed-demo refuses before calling anything, naming the flag.
func TestSeedDemoNeedsAnAdminKey(t *testing.T) {
	t.Setenv("TASKLOOM_ADMIN_KEY", "")
	_, _, err := runStarter("seed-demo", "--api-url", "http://127.0.0.1:1", "--vendors-url", "http://127.0.0.1:2")
	if err == nil || !strings.Contains(err.Error(), "--api-key (or TASKLOOM_ADMIN_KEY) is required") {
		t.Fatalf("err = %v", err)
	}
}

func runSeedDemo(t *testing.T, args []string) []SeededItem {
	t.Helper()
	out, errOut, err := runStarter(args...)
	if err != nil {
		t.Fatalf("seed-demo: %v\n%s", err, errOut)
	}
	var rows []SeededItem
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("seed-demo -o json: %v\n%s", err, out)
	}
	return rows
}
