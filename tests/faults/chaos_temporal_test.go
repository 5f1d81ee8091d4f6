//go:build chaos

package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/testenv"
)

// ownTemporal is a Temporal dev server with a persistent SQLite file that the test can stop and
// start again on the same address and data, as an operator restarting it would.
type ownTemporal struct {
	t        *testing.T
	addr, db string
	srv      *testsuite.DevServer
}

func startOwnTemporal(t *testing.T) *ownTemporal {
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	o := &ownTemporal{t: t, addr: addr, db: filepath.Join(t.TempDir(), "temporal.db")}
	o.start()
	t.Cleanup(o.stop)
	return o
}

func (o *ownTemporal) start() {
	o.t.Helper()
	bin := filepath.Join(testenv.RepoRoot(), ".bin", "temporal")
	if _, err := os.Stat(bin); err != nil {
		o.t.Skipf("%s is missing (make tools fetches it)", bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  bin,
		DBFilename:    o.db,
		ClientOptions: &client.Options{HostPort: o.addr, Namespace: "default"},
		LogLevel:      "error",
		ExtraArgs:     devstack.TemporalDevArgs(),
		Stdout:        io.Discard,
		Stderr:        io.Discard,
	})
	if err != nil {
		o.t.Fatalf("start temporal dev server on %s: %v", o.addr, err)
	}
	o.srv = srv
}

func (o *ownTemporal) stop() {
	if o.srv != nil {
		_ = o.srv.Stop()
		o.srv = nil
	}
}

// Fault: the Temporal dev server (persistent DB file) is stopped while clients post pipeline
// tasks and started again 2 s later on the same port and file; the API and the worker are not
// restarted. Load: one client posting a 1-step sync_api pipeline every 100 ms for the whole
// window (before, during and after the outage). Must hold: requests during the outage are
// refused (never a 2xx for work that was not started); every accepted request (201) finishes
// with status success; quota is charged exactly once per accepted request.
func TestTemporalRestartFinishesEveryAcceptedRequest(t *testing.T) {
	tmp := startOwnTemporal(t)
	env, _, store := pipelineFaultEnv(t, vendors.Options{}, func(c *config.Config) { c.Temporal.Address = tmp.addr })
	ctx := env.Context()
	const quota = 10_000
	user, feature := testenv.Unique("chaos-tmp-"), "chaos-feature"
	if _, err := store.SetQuota(ctx, user, feature, quota); err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		accepted []string
		refused  = map[int]int{}
		sent     int
		// duringOutage counts requests sent while the server was down.
		down, duringOutage = false, 0
	)
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	// One request per tick, each on its own goroutine: a request that hangs while Temporal is
	// down must not hold back the ones sent after it, or none would be sent during the outage.
	go func() {
		var inflight sync.WaitGroup
		defer close(loadDone)
		defer inflight.Wait()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock()
			if down {
				duringOutage++
			}
			mu.Unlock()
			inflight.Go(func() {
				r := env.Do(http.MethodPost, "/api/v1/pipeline-tasks", env.AdminKey, map[string]any{
					"pipeline": "basic_clean_pipeline", "user_id": user, "feature_id": feature,
					"input_data": map[string]any{"input_image": fmt.Sprintf("https://cos.example/tmp/%d.jpg", i)}})
				mu.Lock()
				defer mu.Unlock()
				sent++
				if r.Status == http.StatusCreated {
					var created struct {
						TaskID string `json:"task_id"`
					}
					if err := json.Unmarshal(r.Body, &created); err != nil || created.TaskID == "" {
						t.Errorf("201 without a task id: %s", r.Body)
					}
					accepted = append(accepted, created.TaskID)
				} else {
					refused[r.Status]++
				}
			})
		}
	}()
	setDown := func(v bool) { mu.Lock(); down = v; mu.Unlock() }
	time.Sleep(2 * time.Second)
	setDown(true)
	tmp.stop()
	time.Sleep(2 * time.Second)
	tmp.start()
	setDown(false)
	time.Sleep(3 * time.Second)
	close(stop)
	<-loadDone
	for status := range refused {
		if status/100 == 2 {
			t.Errorf("a request answered %d without a task id", status)
		}
	}

	awaitPipelinesSucceeded(t, env, store, accepted)
	if want, left := quota-len(accepted), quotaLeft(t, env, store, user, feature); left != want {
		t.Errorf("quota remaining %d, want %d (once per accepted request)", left, want)
	}
	if len(accepted) == 0 || duringOutage == 0 {
		t.Errorf("the load did not span the outage: %d accepted, %d sent while Temporal was down", len(accepted), duringOutage)
	}
	t.Logf("Temporal restarted under load: %d requests (%d sent while it was down), %d accepted and all finished success, refused by status %v",
		sent, duringOutage, len(accepted), refused)
}
