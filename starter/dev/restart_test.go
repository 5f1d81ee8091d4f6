package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/loopback"
)

// The dev stack keeps its state across a restart: the docs' pipeline, entry, echo, crawl
// and webhook examples succeed before and after it, a task finished before it is still there, and an
// entry task suspended before it is resumed after it and completes. Each stop is a Ctrl-C: the
// process exits 0 and leaves no child behind.
func TestDevStackKeepsItsStateAcrossARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev stack twice")
	}
	bin := buildDev(t)
	data := t.TempDir()

	s := startDev(t, bin, data)
	round1 := runExamples(t, s, 1)
	suspended := suspendEntryTask(t, s)
	s.interrupt(t)

	s = startDev(t, bin, data)
	runExamples(t, s, 2)
	if got := s.getJSON(t, "/api/v1/pipeline-tasks/"+round1.pipelineTask)["status"]; got != "success" {
		t.Fatalf("the pipeline task of the first run after the restart: status %v", got)
	}
	if got := s.getJSON(t, "/api/workflows/tasks/"+suspended)["status"]; got != "suspended" {
		t.Fatalf("the suspended entry task after the restart: status %v", got)
	}
	s.do(t, http.MethodPut, "/api/v1/quotas/"+restartQuotaUser+"/entry", map[string]any{"remaining": 5}, http.StatusOK)
	s.do(t, http.MethodPost, "/internal/tasks/"+suspended+"/resume", map[string]any{"reason": "quota granted"}, http.StatusAccepted)
	s.waitField(t, "/api/workflows/tasks/"+suspended, "status", "completed", time.Minute)
	s.interrupt(t)
}

// Ctrl-C while a crawler run is in flight: the dev stack exits 0 and neither the Temporal dev
// server nor the crawler process (its own process group, which the terminal's SIGINT does not
// reach) outlives it.
func TestInterruptExitsZeroAndLeavesNoChild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev stack")
	}
	// A crawler that runs until it is stopped; {id} is its $0.
	s := startDev(t, buildDev(t), t.TempDir(), `CRAWL_CRAWLER_COMMAND=/bin/sh -c "sleep 600" {id}`)
	id := strconv.FormatInt(time.Now().UnixNano()/1000, 10)
	s.do(t, http.MethodPost, "/api/v1/crawl-tasks", map[string]any{"original_task_id": json.Number(id)}, http.StatusAccepted)
	deadline := time.Now().Add(time.Minute)
	for !slices.ContainsFunc(descendants(s.cmd.Process.Pid), func(pid int) bool { return strings.Contains(cmdline(pid), "sleep") }) {
		if time.Now().After(deadline) {
			t.Fatal("the crawler run did not start within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.interrupt(t)
}

// cmdline is a process's command line, its arguments joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// restartQuotaUser is the quota account of the entry task the test suspends (no units).
const restartQuotaUser = "restart-test-user"

// devProc is one run of the dev binary.
type devProc struct {
	cmd  *exec.Cmd
	api  string
	key  string
	out  *lockedBuffer
	done chan struct{}
	err  error
}

// buildDev builds the dev binary without -race (the embedded FerretDB would run ~8x slower).
func buildDev(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dev")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the dev binary: %v\n%s", err, out)
	}
	return bin
}

// startDev runs the dev binary from the repository root (it runs ./temporal-dev.sh and reads
// testdata/) with its state in data, on free ports, with env added, and waits until the API is
// ready.
func startDev(t *testing.T, bin, data string, env ...string) *devProc {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	free := func() string {
		a, err := loopback.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	port := func() string { _, p, _ := strings.Cut(free(), ":"); return p }
	api := free()
	cmd := exec.Command(bin)
	cmd.Dir = root
	cmd.Env = append(devEnv(), "DEV_DATA_DIR="+data, "API_ADDR="+api, "WORKER_METRICS_ADDR="+free(),
		"TEMPORAL_PORT="+port(), "TEMPORAL_UI_PORT="+port(), "ENTRY_HTTP_RETRY_DELAYS=1s")
	cmd.Env = append(cmd.Env, env...)
	// Its own process group, as a terminal's foreground job: interrupt signals the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &devProc{cmd: cmd, api: "http://" + api, out: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("dev output (tail):\n%s", p.out.tail(6000))
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if r, err := http.Get(p.api + "/readyz"); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-p.done:
			t.Fatalf("the dev stack exited before it was ready: %v", p.err)
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the dev stack was not ready within 3 minutes")
		}
	}
	key, err := os.ReadFile(filepath.Join(data, "admin-key"))
	if err != nil {
		t.Fatal(err)
	}
	p.key = strings.TrimSpace(string(key))
	return p
}

// devEnv is the test's environment without anything that would point the dev stack at other
// servers than its own stand-ins.
func devEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TASKLOOM_ENV", "TASKLOOM_ADMIN_KEY", "TEMPORAL_ADDRESS", "TEMPORAL_UI_URL", "MONGO_URI", "MONGO_DATABASE",
			"REDIS_URL", "REDIS_KEY_PREFIX", "KAFKA_BROKERS", "PIPELINE_FAKE_VENDORS_URL", "TELEGRAM_BOT_TOKEN",
			"FEISHU_APP_ID", "SUMMARY_WEBHOOK_URL", "CRAWL_CRAWLER_COMMAND", "DEV_LOG_LEVEL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// interrupt is Ctrl-C: SIGINT to the process group. The process must exit 0 and leave none of
// its children (the Temporal dev server, crawler runs) behind.
func (p *devProc) interrupt(t *testing.T) {
	t.Helper()
	children := descendants(p.cmd.Process.Pid)
	if len(children) == 0 {
		t.Fatal("the dev stack has no child process (the Temporal dev server?)")
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the dev stack did not exit within a minute of SIGINT")
	}
	if p.err != nil {
		t.Fatalf("the dev stack exited with %v after SIGINT, want 0", p.err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for _, c := range children {
			if alive(c) {
				left = append(left, strconv.Itoa(c))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children left running after the dev stack exited: %s", strings.Join(left, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := p.out.String(); strings.Contains(out, "panic:") {
		t.Fatalf("the dev stack panicked:\n%s", p.out.tail(4000))
	}
}

// descendants lists the processes under pid (children, their children, …) from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 {
			parent[n], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// alive reports whether pid still runs (a zombie waiting for its reaper has ended).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// examples are what one round of runExamples made.
type examples struct{ pipelineTask string }

// runExamples runs the docs' examples over HTTP, as its curls do, and waits for each to finish.
func runExamples(t *testing.T, p *devProc, round int) examples {
	t.Helper()
	unique := strconv.FormatInt(time.Now().UnixNano(), 36)

	// Pipelines: the example collection_video_pipeline on the fake vendors and SCF.
	task := p.do(t, http.MethodPost, "/api/v1/pipeline-tasks", map[string]any{
		"pipeline": "collection_video_pipeline", "user_id": "demo-user", "feature_id": "demo-feature",
		"input_data": map[string]any{"product_images": []string{"https://cos.example/p/1.jpg"}, "background_music": "https://cos.example/bgm.mp3"},
	}, http.StatusCreated)["task_id"].(string)
	p.waitField(t, "/api/v1/pipeline-tasks/"+task, "status", "success", 2*time.Minute)

	// Entry: the HTTP intake, waiting for the result.
	res := p.do(t, http.MethodPost, "/api/workflows/apply", map[string]any{
		"workflowId": "entry_echo", "userText": "hello", "historyChunks": []string{},
		"coreEnvelope":   map[string]any{"metadata": map[string]any{"chat_id": "demo-" + unique}},
		"idempotencyKey": "restart-" + unique, "waitForResult": true, "waitTimeoutSeconds": 60,
	}, http.StatusOK)
	if res["status"] != "completed" {
		t.Fatalf("round %d: entry apply: %v", round, res)
	}

	// Echo: pull the demo project's server tasks.
	if pull := p.do(t, http.MethodGet, "/api/v1/projects/demo/tasks/pull?limit=10", nil, http.StatusOK); pull["success"] != true {
		t.Fatalf("round %d: echo pull: %v", round, pull)
	}

	// Crawl: a task runs the fake crawler and completes when every tweet is processed.
	id := strconv.FormatInt(time.Now().UnixNano()/1000, 10)
	p.do(t, http.MethodPost, "/api/v1/crawl-tasks", map[string]any{"original_task_id": json.Number(id)}, http.StatusAccepted)
	p.waitField(t, "/api/v1/crawl-tasks/"+id, "status", "Completed", 2*time.Minute)

	// Webhook: one sweep of the result table (the Bitable emulator's demo base).
	p.do(t, http.MethodPost, "/api/v1/webhook/sweeps", map[string]any{}, http.StatusOK)
	return examples{pipelineTask: task}
}

// suspendEntryTask applies an entry task for an account without quota and no retries, and
// waits until it is suspended.
func suspendEntryTask(t *testing.T, p *devProc) string {
	t.Helper()
	p.do(t, http.MethodPut, "/api/v1/quotas/"+restartQuotaUser+"/entry", map[string]any{"remaining": 0}, http.StatusOK)
	id := p.do(t, http.MethodPost, "/api/workflows/apply", map[string]any{
		"workflowId": "entry_echo", "userText": "held over a restart", "historyChunks": []string{},
		"coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": "restart-held"}},
		"context":      map[string]any{"user": map[string]any{"id": restartQuotaUser}},
		"retryMax":     0, "idempotencyKey": "restart-held-" + strconv.FormatInt(time.Now().UnixNano(), 36),
	}, http.StatusAccepted)["taskId"].(string)
	p.waitField(t, "/api/workflows/tasks/"+id, "status", "suspended", time.Minute)
	return id
}

// do sends one request with the admin key and decodes the JSON answer, checking the status.
func (p *devProc) do(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	status, m, raw, err := p.request(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	return m
}

func (p *devProc) getJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	return p.do(t, http.MethodGet, path, nil, http.StatusOK)
}

func (p *devProc) request(method, path string, body any) (int, map[string]any, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.api+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("X-API-Key", p.key)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 90 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return resp.StatusCode, nil, raw, fmt.Errorf("decode %s: %w", raw, err)
		}
	}
	return resp.StatusCode, m, raw, nil
}

// waitField polls GET path until field equals want; a terminal failure status stops it early.
func (p *devProc) waitField(t *testing.T, path, field, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []byte
	for time.Now().Before(deadline) {
		status, m, raw, err := p.request(http.MethodGet, path, nil)
		last = raw
		if err == nil && status == http.StatusOK {
			got := fmt.Sprint(m[field])
			if got == want {
				return
			}
			if got == "failed" || got == "Failed" || got == "dropped" {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("GET %s: %s never became %q; last answer: %s", path, field, want, last)
}

// lockedBuffer collects a process's output from two pipes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) tail(n int) string {
	s := l.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
