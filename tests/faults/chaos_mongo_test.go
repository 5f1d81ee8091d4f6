//go:build chaos

package faults_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// ownMongo is an embedded FerretDB this test can stop and start again on the same address and
// data directory, as an operator restarting the database would.
type ownMongo struct {
	t         *testing.T
	addr, dir string
	uri       string
	cmd       *exec.Cmd
}

func startOwnMongo(t *testing.T) *ownMongo {
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	m := &ownMongo{t: t, addr: addr, dir: t.TempDir()}
	m.start()
	t.Cleanup(m.stop)
	return m
}

func (m *ownMongo) start() {
	m.t.Helper()
	bin := filepath.Join(testenv.RepoRoot(), ".bin", "embedded-mongo")
	if _, err := os.Stat(bin); err != nil {
		m.t.Skipf("%s is missing (make tools builds it)", bin)
	}
	m.cmd = exec.Command(bin, "-addr", m.addr, "-dir", m.dir)
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		m.t.Fatalf("embedded mongo did not start: %v", err)
	}
	m.uri = strings.TrimSpace(line)
}

func (m *ownMongo) stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	m.cmd = nil
}

// Fault: the database dies (SIGKILL) while clients keep calling. Load: 15 requests over three
// routes during the outage, with a key the API has not verified yet, so authenticating needs the
// database. Must hold: each answers 503 SERVICE_UNAVAILABLE with Retry-After within a few seconds
// (no hang, no 500); a key the API verified before the outage still authenticates from its cache
// (API_KEY_CACHE_TTL) while a route that reads the database answers 503; and once the database is
// back the same API process serves again without a restart.
func TestMongoDownAnswers503AndResumesWithoutRestart(t *testing.T) {
	m := startOwnMongo(t)
	env := e2e.New(t, func(c *config.Config) { c.Mongo.URI = m.uri; c.API.KeyCacheTTL = time.Hour })
	verified, unverified := env.NewKey(auth.PermWrite, ""), env.NewKey(auth.PermWrite, "")
	if r := env.Do(http.MethodGet, "/api/v1/me", verified, nil); r.Status != http.StatusOK {
		t.Fatalf("before the fault: %d %s", r.Status, r.Body)
	}

	m.stop()
	probes := []struct{ method, path string }{
		{http.MethodGet, "/api/v1/me"},
		{http.MethodGet, "/api/v1/crawl-tasks/42"},
		{http.MethodPost, "/api/v1/crawl-tasks"},
	}
	unavailable := func(what string, resp *e2e.Response) {
		if code := expectError(t, what+" with mongo down", resp, http.StatusServiceUnavailable); code != "" && code != "SERVICE_UNAVAILABLE" {
			t.Errorf("%s: code %s", what, code)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", what)
		}
	}
	requests := 0
	for i := range 5 {
		for _, p := range probes {
			start := time.Now()
			resp := send(t, env, request{method: p.method, path: p.path, key: unverified, body: []byte(`{"original_task_id": 4242}`)})
			requests++
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("%s %s took %s while the database was down", p.method, p.path, took)
			}
			unavailable(p.method+" "+p.path, resp)
		}
		if i == 0 && t.Failed() {
			t.FailNow()
		}
	}
	if r := env.Do(http.MethodGet, "/api/v1/me", verified, nil); r.Status != http.StatusOK {
		t.Errorf("GET /api/v1/me with a key verified before the outage: %d %s, want 200 from the key cache", r.Status, r.Body)
	}
	unavailable("GET /api/v1/crawl-tasks/42 with a verified key",
		send(t, env, request{method: http.MethodGet, path: "/api/v1/crawl-tasks/42", key: verified}))

	m.start()
	e2e.Eventually(t, time.Minute, "the API to serve again after the database restarted", func() bool {
		return env.Do(http.MethodGet, "/api/v1/me", unverified, nil).Status == http.StatusOK
	})
	// Nothing was half-written during the outage: the crawl task posted then does not exist.
	if r := env.Do(http.MethodGet, "/api/v1/crawl-tasks/4242", unverified, nil); r.Status != http.StatusNotFound {
		t.Errorf("crawl task posted during the outage: %d %s", r.Status, r.Body)
	}
	t.Logf("%d requests during the outage: all 503 + Retry-After; resumed without restart", requests)
}

// Fault: the database dies while an entry client applies. An apply names a pipeline this API
// process has seen and is started by Temporal, which does not need the database. Must hold: the
// apply is accepted (202) during the outage, and once the database is back the task's workflow
// records itself (one workflow_runs document) and completes.
func TestMongoDownApplyIsAcceptedAndCompletesWhenBack(t *testing.T) {
	m := startOwnMongo(t)
	env, _, store := pipelineFaultEnv(t, vendors.Options{}, func(c *config.Config) {
		c.Mongo.URI = m.uri
		c.API.KeyCacheTTL = time.Hour
		c.Entry.IdempotencyWindow = time.Hour
	})
	ctx := env.Context()
	if _, err := store.SetQuota(ctx, env.Config.Entry.UserID, env.Config.Entry.FeatureID, 10); err != nil {
		t.Fatal(err)
	}
	publishEntryPipeline(t, env, store)
	key := env.NewKey(auth.PermWrite, "")
	apply := func(n int) *e2e.Response {
		return env.Do(http.MethodPost, "/api/workflows/apply", key, map[string]any{
			"workflowId": scaleEntryPipeline, "userText": fmt.Sprintf("https://cos.example/mongo-down/%d.jpg", n),
			"historyChunks": []string{}, "coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": "mongo-down"}},
			"context": map[string]any{"idempotencyKey": testenv.Unique("mongo-down-")}})
	}
	status := func(id string) string {
		var st struct {
			Status string `json:"status"`
		}
		if r := env.Do(http.MethodGet, "/api/workflows/tasks/"+id, key, nil); r.Status == http.StatusOK {
			_ = json.Unmarshal(r.Body, &st)
		}
		return st.Status
	}
	// Before the outage: the API verifies the key and learns the pipeline exists.
	before := apply(0)
	if before.Status != http.StatusAccepted {
		t.Fatalf("apply before the outage: %d %s", before.Status, before.Body)
	}
	e2e.Eventually(t, time.Minute, "the first task to complete", func() bool {
		return status(before.Map(t)["taskId"].(string)) == entry.StatusCompleted
	})

	m.stop()
	during := apply(1)
	if during.Status != http.StatusAccepted {
		t.Fatalf("apply with the database down: %d %s, want 202 (Temporal holds the task)", during.Status, during.Body)
	}
	id := during.Map(t)["taskId"].(string)
	m.start()
	e2e.Eventually(t, 3*time.Minute, "the task applied during the outage to complete", func() bool {
		return status(id) == entry.StatusCompleted
	})
	n, err := env.Platform.Mongo.Collection(entrydb.CollRuns).CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil || n != 1 {
		t.Fatalf("workflow_runs documents for the task: %d %v", n, err)
	}
}
