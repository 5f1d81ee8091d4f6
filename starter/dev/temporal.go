package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/taskloom/taskloom/internal/config"
)

// temporalDB is the Temporal dev server's SQLite database under DEV_DATA_DIR: executions,
// schedules and history survive a restart of the dev stack.
const temporalDB = "temporal.db"

// temporalStopGrace is how long the dev server may take to stop on SIGTERM before it is killed.
const temporalStopGrace = 10 * time.Second

// temporalDev is the Temporal dev server run by ./temporal-dev.sh in a process group of its own,
// so Ctrl-C in the terminal reaches it only through the dev stack, which stops it last (after the
// worker and the API) and waits for it.
type temporalDev struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the server has exited
	err    error         // Wait's result, set before exited is closed
	quiet  atomic.Bool
}

// startTemporalDev starts the dev server with its database in dataDir and waits until the
// frontend accepts connections. Its log lines pass through at DEV_LOG_LEVEL; its start-up
// summary (the URLs) is left to the banner unless DEV_LOG_LEVEL=debug.
func startTemporalDev(cfg *config.Config) (*temporalDev, error) {
	d := cfg.DevStack
	for name, port := range map[string]int{"TEMPORAL_PORT": d.TemporalPort, "TEMPORAL_UI_PORT": d.TemporalUIPort} {
		if err := portFree(port); err != nil {
			return nil, fmt.Errorf("%s %d is in use (another make dev? stop it, or set %s): %w", name, port, name, err)
		}
	}
	script, err := filepath.Abs("temporal-dev.sh")
	if err != nil {
		return nil, err
	}
	db, err := filepath.Abs(filepath.Join(d.DataDir, temporalDB))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "TEMPORAL_DB="+db, "TEMPORAL_IP=127.0.0.1",
		"TEMPORAL_PORT="+strconv.Itoa(d.TemporalPort), "TEMPORAL_UI_PORT="+strconv.Itoa(d.TemporalUIPort))
	if os.Getenv("TEMPORAL_LOG_LEVEL") == "" {
		cmd.Env = append(cmd.Env, "TEMPORAL_LOG_LEVEL="+d.LogLevel)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t := &temporalDev{cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout = io.Discard
	if d.LogLevel == "debug" {
		cmd.Stdout = os.Stderr
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start temporal-dev.sh: %w", err)
	}
	go func() {
		t.copyLines(errPipe) // Wait closes the pipe: read it to the end first
		t.err = cmd.Wait()
		close(t.exited)
	}()
	if err := t.waitReady(cfg.Temporal.Address); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// copyLines passes the server's log lines to the terminal until the stack starts stopping; what
// it prints while its peers go away (dial errors) is noise, not news.
func (t *temporalDev) copyLines(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		if !t.quiet.Load() {
			fmt.Fprintln(os.Stderr, s.Text())
		}
	}
}

func (t *temporalDev) waitReady(addr string) error {
	deadline := time.Now().Add(10 * time.Minute) // the first run builds the CLI
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-t.exited:
			return fmt.Errorf("temporal-dev.sh exited before %s answered: %v", addr, t.err)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal dev server did not answer on %s", addr)
		}
	}
}

// stop ends the server's process group (SIGTERM, then SIGKILL after temporalStopGrace) and
// returns once the server has exited, so nothing of the stack outlives the dev process.
func (t *temporalDev) stop() {
	t.quiet.Store(true)
	pgid := t.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintf(os.Stderr, "taskloom dev: stop temporal dev server: %v\n", err)
	}
	select {
	case <-t.exited:
	case <-time.After(temporalStopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-t.exited
	}
	// A grandchild the server left behind in its group goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// portFree reports an error when port is already listened on at 127.0.0.1.
func portFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}
