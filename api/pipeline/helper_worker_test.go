package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/worker"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// A separate worker process, so a test can kill it with SIGKILL like a crashed pod: the test
// binary re-executes itself with these variables set and runs only the worker.
const (
	helperEnvTemporal = "PIPELINE_HELPER_TEMPORAL"
	helperEnvMongo    = "PIPELINE_HELPER_MONGO"
	helperEnvDB       = "PIPELINE_HELPER_DB"
	helperEnvQueue    = "PIPELINE_HELPER_QUEUE"
)

// isHelperWorker reports whether this test binary was started as a worker process.
func isHelperWorker() bool { return os.Getenv(helperEnvQueue) != "" }

// runHelperWorker runs a pipeline worker until the process is killed or interrupted.
func runHelperWorker() error {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(helperEnvTemporal), Namespace: "default"})
	if err != nil {
		return fmt.Errorf("dial temporal: %w", err)
	}
	defer c.Close()
	mc, err := mongo.Connect(options.Client().ApplyURI(os.Getenv(helperEnvMongo)))
	if err != nil {
		return fmt.Errorf("connect mongo: %w", err)
	}
	defer func() { _ = mc.Disconnect(context.Background()) }()
	acts := worker.PipelineActivities(config.Defaults(), mc.Database(os.Getenv(helperEnvDB)),
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	w := sdkworker.New(c, os.Getenv(helperEnvQueue), sdkworker.Options{})
	pipelinewf.Register(w, acts)
	return w.Run(sdkworker.InterruptCh())
}

// startWorkerProcess runs the harness's worker in a child process and returns it.
func (h *harness) startWorkerProcess(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperEnvTemporal+"="+h.temporalAddr, helperEnvMongo+"="+h.mongoURI, helperEnvDB+"="+h.store.Database(),
		helperEnvQueue+"="+h.queue)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}
