//go:build chaos

package faults_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// Fault: the API process gets SIGKILL in the middle of 20 concurrent pipeline-task creations and
// is started again 1 s later on the same address. Load: 20 clients, each with its own
// Idempotency-Key, POST /api/v1/pipeline-tasks and retry (same key, same body) on any transport
// error or 5xx until they get an answer. Must hold: every key ends with exactly one task that
// succeeds, the quota is charged exactly once per key, no other task or step documents exist
// (nothing orphaned by the kill), the quota holds no open task, and afterwards the same key with
// the same body answers the same task while a different body is refused.
func TestAPISIGKILLMidTaskCreationLeavesOneTaskPerKey(t *testing.T) {
	env, _, store := pipelineFaultEnv(t, vendors.Options{})
	ctx := env.Context()
	const clients, quota = 20, 1000
	user, feature := testenv.Unique("chaos-api-"), "chaos-feature"
	if _, err := store.SetQuota(ctx, user, feature, quota); err != nil {
		t.Fatal(err)
	}
	api := startAPIProcess(t, env.Config)
	body := func(i int, img string) map[string]any {
		return map[string]any{"pipeline": "basic_clean_pipeline", "user_id": user, "feature_id": feature,
			"input_data": map[string]any{"input_image": fmt.Sprintf("https://cos.example/api-kill/%d/%s.jpg", i, img)}}
	}
	keys := make([]string, clients)
	for i := range keys {
		keys[i] = testenv.Unique("chaos-key-")
	}
	var answered atomic.Int32
	tasks := make([]string, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tasks[i] = createWithRetry(t, api.url, env.AdminKey, keys[i], body(i, "a"))
			answered.Add(1)
		}()
	}
	e2e.Eventually(t, time.Minute, "some creations to be answered", func() bool { return answered.Load() >= 3 })
	inFlight := clients - int(answered.Load())
	api.proc.kill()
	time.Sleep(time.Second)
	api = startAPIProcessAt(t, env.Config, api.addr)
	wg.Wait()

	seen := map[string]bool{}
	for i, id := range tasks {
		if id == "" || seen[id] {
			t.Fatalf("client %d: task %q (empty or shared)", i, id)
		}
		seen[id] = true
	}
	awaitPipelinesSucceeded(t, env, store, tasks)
	q, err := store.GetQuota(ctx, user, feature)
	if err != nil {
		t.Fatal(err)
	}
	if q.Consumed != clients || q.Remaining != quota-clients || q.Refunded != 0 {
		t.Errorf("quota %+v: want exactly %d charges", q, clients)
	}
	db := env.Platform.Mongo
	if n, _ := db.Collection(pipelinedb.CollTasks).CountDocuments(ctx, bson.D{{Key: "user_id", Value: user}}); n != clients {
		t.Errorf("%d task documents for %d keys", n, clients)
	}
	ids := make(bson.A, 0, clients)
	for _, id := range tasks {
		ids = append(ids, id)
	}
	if n, _ := db.Collection(pipelinedb.CollSteps).CountDocuments(ctx, bson.D{}); n != clients {
		t.Errorf("%d step documents in all, want %d (one per task)", n, clients)
	}
	if n, _ := db.Collection(pipelinedb.CollSteps).CountDocuments(ctx, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}}); n != clients {
		t.Errorf("%d step documents of the tasks, want %d", n, clients)
	}
	if n, _ := db.Collection(pipelinedb.CollQuotas).CountDocuments(ctx, bson.D{{Key: "user_id", Value: user},
		{Key: "open_tasks.0", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
		t.Errorf("the quota still holds open tasks")
	}
	for i, key := range keys {
		if id := createWithRetry(t, api.url, env.AdminKey, key, body(i, "a")); id != tasks[i] {
			t.Errorf("key %d: a repeat answered task %s, want %s", i, id, tasks[i])
		}
	}
	if r := post(t, api.url, env.AdminKey, keys[0], body(0, "different")); r.StatusCode != http.StatusConflict {
		t.Errorf("same key, different body: %d", r.StatusCode)
	}
	t.Logf("%d creations, API SIGKILLed with %d unanswered: %d tasks, %d charges, all succeeded",
		clients, inFlight, len(seen), q.Consumed)
}

// createWithRetry posts until it gets 200/201 (a client retrying with its Idempotency-Key) and
// returns the task id; a 4xx other than those fails the test.
func createWithRetry(t *testing.T, url, apiKey, key string, body map[string]any) string {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp := post(t, url, apiKey, key, body)
		switch {
		case resp == nil || resp.StatusCode >= 500:
			time.Sleep(200 * time.Millisecond)
			continue
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
			var out struct {
				TaskID string `json:"task_id"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			return out.TaskID
		}
		t.Errorf("create with key %s: status %d", key, resp.StatusCode)
		return ""
	}
	t.Errorf("create with key %s: no answer within 2 minutes", key)
	return ""
}

// post sends one creation; nil when the API could not be reached.
func post(t *testing.T, url, apiKey, key string, body map[string]any) *http.Response {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url+"/api/v1/pipeline-tasks", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", apiKey)
	req.Header.Set("Idempotency-Key", key)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil
	}
	return resp
}

// apiProc is one `starter api` child process.
type apiProc struct {
	proc      *workerProc
	addr, url string
}

// startAPIProcess runs `starter api` on a free address with exactly cfg and waits for /healthz.
func startAPIProcess(t *testing.T, cfg *config.Config) *apiProc {
	t.Helper()
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return startAPIProcessAt(t, cfg, addr)
}

func startAPIProcessAt(t *testing.T, cfg *config.Config, addr string) *apiProc {
	t.Helper()
	c := *cfg
	c.API.Addr = addr
	if c.LogLevel == "" || c.LogLevel == "info" {
		c.LogLevel = "warn"
	}
	logs, err := os.CreateTemp(t.TempDir(), "api-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(starterBinary(t), "api")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, configEnv(t, &c)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("api process log (%s):\n%s", logs.Name(), tail(b, 4000))
		}
	})
	url := "http://" + addr
	e2e.Eventually(t, time.Minute, "the API process to answer /healthz", func() bool {
		r, err := http.Get(url + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	return &apiProc{proc: p, addr: addr, url: url}
}
