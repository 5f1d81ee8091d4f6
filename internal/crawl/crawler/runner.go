// Package crawler runs the crawler command of a crawl task (CRAWL_CRAWLER_COMMAND): it builds the
// argument list from the template without a shell, starts it in its own process group and keeps
// its last output lines. The crawler talks to Kafka itself; this package opens no connection, so
// the crawl activities use it without reaching a connector (workflows/crawl imports them).
package crawler

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Crawler runner defaults.
const (
	KeepLinesDefault      = 20
	HeartbeatEveryDefault = 5 * time.Second
	// killGrace is how long a cancelled crawler gets after SIGTERM before
	// its process group is killed.
	killGrace = 10 * time.Second
	// maxLine caps one remembered output line; crawlers print long JSON.
	maxLine = 4096
)

// Result is what a finished crawler left behind.
type Result struct {
	ExitCode  int
	LastLines []string
	Lines     int
	Duration  time.Duration
}

// Runner starts a crawler command and watches it.
type Runner struct {
	// KeepLines is how many of the last output lines are kept.
	KeepLines int
	// HeartbeatEvery is how often Heartbeat is called while it runs.
	HeartbeatEvery time.Duration
	// Heartbeat receives the output line count and the latest line.
	Heartbeat func(lines int, last string)
}

// Run starts argv with env appended to this process's environment, waits
// for it, and returns its exit code and last output lines (stdout and
// stderr interleaved). A crawler that exits non-zero is not an error here;
// the caller decides. Cancelling ctx terminates its whole process group, so
// a `docker run` wrapper and its children go too.
func (r Runner) Run(ctx context.Context, argv []string, env []string) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("crawler command is empty")
	}
	keep := r.KeepLines
	if keep <= 0 {
		keep = KeepLinesDefault
	}
	every := r.HeartbeatEvery
	if every <= 0 {
		every = HeartbeatEveryDefault
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	out := &tail{keep: keep}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start crawler %q: %w", argv[0], err)
	}
	readDone := make(chan struct{})
	go func() { defer close(readDone); out.read(pr) }()
	waitErr := make(chan error, 1)
	go func() { err := cmd.Wait(); _ = pw.Close(); waitErr <- err }()

	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case err := <-waitErr:
			<-readDone
			res := out.result()
			res.Duration = time.Since(start)
			return res, exitStatus(ctx, err, &res)
		case <-ticker.C:
			if r.Heartbeat != nil {
				n, last := out.latest()
				r.Heartbeat(n, last)
			}
		}
	}
}

func exitStatus(ctx context.Context, err error, res *Result) error {
	if ctx.Err() != nil {
		return fmt.Errorf("crawler stopped: %w", ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode() // -1 when killed by a signal
		return nil
	default:
		return fmt.Errorf("wait for crawler: %w", err)
	}
}

// tail keeps the last lines of the crawler's output.
type tail struct {
	mu    sync.Mutex
	keep  int
	lines []string
	count int
}

func (t *tail) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		t.add(sc.Text())
	}
	// A line over the scanner's limit stops scanning; keep draining so the
	// crawler never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

func (t *tail) add(line string) {
	if len(line) > maxLine {
		line = line[:maxLine] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.count++
	t.lines = append(t.lines, line)
	if len(t.lines) > t.keep {
		t.lines = t.lines[len(t.lines)-t.keep:]
	}
}

func (t *tail) latest() (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return t.count, ""
	}
	return t.count, t.lines[len(t.lines)-1]
}

func (t *tail) result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Result{LastLines: append([]string(nil), t.lines...), Lines: t.count}
}
