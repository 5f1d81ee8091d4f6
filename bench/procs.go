package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/loopback"
)

// app is the worker and the API as separate processes of the real binary (`starter worker`,
// `starter api`), the way they are deployed, so their memory can be measured apart from the
// load generator: started by the bench, or a cluster's (then worker and api are nil).
type app struct {
	worker, api *exec.Cmd
	apiURL      string // where the scenarios send their requests
	// metricsURLs are every API's and worker's /metrics (costs.go).
	metricsURLs []string
	// logPaths are the files the processes log to.
	logPaths []string
	// procs are the pids of every process whose CPU a row reports (cpu.go), by role.
	procs map[string][]int
	// adminKey is the cluster's admin key; "" when the bench creates its own (newRun).
	adminKey string
}

// buildStarter compiles ./starter once into .bin/taskloom-bench.
func buildStarter(ctx context.Context, root string) (string, error) {
	bin := filepath.Join(root, ".bin", "taskloom-bench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./starter")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./starter: %v\n%s", err, out)
	}
	return bin, nil
}

func startApp(ctx context.Context, s *stack, bin string) (*app, error) {
	apiAddr, err := loopback.FreeAddr()
	if err != nil {
		return nil, err
	}
	metricsAddr, err := loopback.FreeAddr()
	if err != nil {
		return nil, err
	}
	env := s.env(apiAddr, metricsAddr)
	logs, err := os.CreateTemp("", "taskloom-bench-*.log")
	if err != nil {
		return nil, err
	}
	logf("worker and API logs: %s", logs.Name())
	a := &app{apiURL: "http://" + apiAddr, logPaths: []string{logs.Name()}}
	workerMetrics := "http://" + metricsAddr + "/metrics"
	a.metricsURLs = []string{a.apiURL + "/metrics", workerMetrics}
	// One after the other: both create the same indexes at start, and FerretDB v1 drops the
	// connection when two processes create the same indexes at the same moment.
	if a.worker, err = spawn(bin, env, "worker", logs); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, workerMetrics, time.Minute); err != nil {
		a.stop()
		return nil, err
	}
	if a.api, err = spawn(bin, env, "api", logs); err != nil {
		a.stop()
		return nil, err
	}
	if err := waitHTTP(ctx, a.apiURL+"/healthz", time.Minute); err != nil {
		a.stop()
		return nil, err
	}
	a.procs = map[string][]int{"temporal server": {s.temporalPID}, "ferretdb": {s.mongoPID},
		"worker": {a.worker.Process.Pid}, "api": {a.api.Process.Pid}, "load generator and fakes": {os.Getpid()}}
	return a, nil
}

func spawn(bin string, env []string, sub string, logs *os.File) (*exec.Cmd, error) {
	cmd := exec.Command(bin, sub)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", sub, err)
	}
	return cmd, nil
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s", url, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (a *app) stop() {
	for _, c := range []*exec.Cmd{a.api, a.worker} {
		if c != nil {
			stopProcess(c)
		}
	}
}

// stopProcess interrupts a child and kills it if it has not exited within 10 s.
func stopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// rssMB reads a process's resident set size (VmRSS) and its peak (VmHWM) from /proc.
func rssMB(pid int) (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak, nil
}

func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
