package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/worker"
)

// workerProcessEnv carries an Env's configuration (JSON) to the test binary re-executed as a
// worker process.
const workerProcessEnv = "TASKLOOM_E2E_WORKER_PROCESS"

// mainUsed records that the package's TestMain is Main, without which a re-executed test binary
// would run the tests instead of a worker.
var mainUsed bool

// Main is testenv.Main for packages whose tests start worker processes (StartWorkerProcess): the
// test binary, re-executed by StartWorkerProcess, runs a worker instead of the tests. Use it as
// `func TestMain(m *testing.M) { e2e.Main(m) }`.
func Main(m *testing.M) {
	if raw := os.Getenv(workerProcessEnv); raw != "" {
		if err := runWorkerProcess(raw); err != nil {
			fmt.Fprintln(os.Stderr, "e2e worker process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	mainUsed = true
	testenv.Main(m)
}

// runWorkerProcess runs the Temporal worker of the configuration in raw until it is interrupted
// or killed.
func runWorkerProcess(raw string) error {
	var cfg config.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("decode configuration: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := platform.Open(ctx, &cfg, logging.NewTo(os.Stderr, "error"))
	if err != nil {
		return err
	}
	defer p.Close()
	svc, err := taskechowire.FromPlatform(p)
	if err != nil {
		return err
	}
	w, err := worker.New(p, svc)
	if err != nil {
		return err
	}
	return w.Run(sdkworker.InterruptCh())
}

// WorkerProcess is a worker running in a child process (StartWorkerProcess).
type WorkerProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// StartWorkerProcess runs a worker on the env's task queue in a child process: the test binary
// itself, re-executed with the env's configuration (the package's TestMain must be Main). Kill
// it to simulate a crashed pod. The child runs only the Temporal worker; the background services
// stay in the test process. Stop the in-process worker (StopWorker, or NewWithoutWorker) when the
// child must be the only one polling.
func (e *Env) StartWorkerProcess() *WorkerProcess {
	e.T.Helper()
	if !mainUsed {
		e.T.Fatal("e2e.StartWorkerProcess: the package's TestMain must be e2e.Main")
	}
	raw, err := json.Marshal(e.Config)
	if err != nil {
		e.T.Fatalf("e2e worker process: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerProcessEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatalf("e2e worker process: %v", err)
	}
	w := &WorkerProcess{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.done) }()
	e.T.Cleanup(w.Kill)
	return w
}

// Kill sends SIGKILL (no graceful stop, like a crashed pod) and waits for the process to exit.
func (w *WorkerProcess) Kill() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Kill()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
	}
}
