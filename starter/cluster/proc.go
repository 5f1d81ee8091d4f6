package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one process of the cluster as it was started: `start NAME` starts it again from this
// record (run/NAME.json), with the same argv, environment and ports.
type proc struct {
	Name  string   `json:"name"`
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir"`
	Ports Ports    `json:"ports"`
	// User, when set, is the account the process runs as (PostgreSQL refuses to run as root).
	User string `json:"user,omitempty"`
	// StopSignal asks the process to stop; SIGTERM unless set (PostgreSQL's fast shutdown is
	// SIGINT: on SIGTERM it waits for every client to disconnect).
	StopSignal syscall.Signal `json:"stop_signal,omitempty"`
}

// stopGrace is how long stop waits after the stop signal before SIGKILL.
const stopGrace = 10 * time.Second

// layout is CLUSTER_DIR's run and log directories.
type layout struct{ dir string }

func (l layout) pidFile(name string) string  { return filepath.Join(l.dir, "run", name+".pid") }
func (l layout) procFile(name string) string { return filepath.Join(l.dir, "run", name+".json") }
func (l layout) logFile(name string) string  { return filepath.Join(l.dir, "logs", name+".log") }

// pid is the recorded pid of name, 0 when there is none.
func (l layout) pid(name string) int {
	b, err := os.ReadFile(l.pidFile(name))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// running reports the pid of name when that process is alive.
func (l layout) running(name string) (int, bool) {
	pid := l.pid(name)
	return pid, pid > 0 && alive(pid)
}

// alive reports whether pid is a live process (a zombie, exited but not reaped, is not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// stat is "pid (comm) state …"; comm may hold spaces and parentheses, the last ')' ends it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// start starts p detached — its own session, so it outlives the launcher and a Ctrl-C in the
// launcher's terminal does not reach it — with its output appended to logs/NAME.log, and
// records its pid and p. The returned channel closes when the process exits while the launcher
// still runs (it is reaped then, not left a zombie).
func (l layout) start(p proc) (<-chan struct{}, error) {
	for _, d := range []string{"run", "logs"} {
		if err := os.MkdirAll(filepath.Join(l.dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	logf, err := os.OpenFile(l.logFile(p.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- %s start: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(p.Argv, " "))
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = p.Env, p.Dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if p.User != "" {
		cred, err := credential(p.User)
		if err != nil {
			return nil, err
		}
		cmd.SysProcAttr.Credential = cred
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := os.WriteFile(l.pidFile(p.Name), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return exited, err
	}
	return exited, writeJSON(l.procFile(p.Name), p, 0o600)
}

// credential is the uid and gid of the account name.
func credential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("run as %s: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// recorded is the record of name written when it was last started.
func (l layout) recorded(name string) (proc, error) {
	var p proc
	if err := readJSON(l.procFile(name), &p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, fmt.Errorf("%s was never started in %s (run up first)", name, l.dir)
		}
		return p, err
	}
	return p, nil
}

// stop sends name's process group its stop signal, waits up to stopGrace for the whole group
// to exit, then SIGKILLs what is left. A process that is not running is not an error.
func (l layout) stop(name string) error {
	pid := l.pid(name)
	if pid <= 0 || !groupHasLive(pid) {
		return nil
	}
	sig := syscall.SIGTERM
	if p, err := l.recorded(name); err == nil && p.StopSignal != 0 {
		sig = p.StopSignal
	}
	_ = syscall.Kill(-pid, sig)
	if awaitGone(pid, stopGrace) {
		return nil
	}
	return l.kill(name)
}

// killWait is how long kill waits for a SIGKILLed process group to be gone.
const killWait = 5 * time.Second

// awaitGone waits up to d until the process group pgid has no live member and is reaped; false
// when d passed first.
func awaitGone(pgid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !groupHasLive(pgid) {
			waitReaped(pgid)
			return true
		}
	}
	return false
}

// reapWait bounds waitReaped.
const reapWait = 5 * time.Second

// waitReaped waits (up to reapWait) until the exited process group pgid is reaped too: a process
// whose launcher has exited is reaped by init, a moment after it exits, and until then `kill -0`
// still finds its pid.
func waitReaped(pgid int) {
	for deadline := time.Now().Add(reapWait); time.Now().Before(deadline); {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill SIGKILLs name's process group and waits (briefly) until it is gone.
func (l layout) kill(name string) error {
	pid := l.pid(name)
	if pid <= 0 {
		return nil
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if awaitGone(pid, killWait) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) still running after SIGKILL", name, pid)
}

// groupHasLive reports whether the process group pgid — a process start started leads its own
// group, and its children stay in it — has a live (not zombie) member.
func groupHasLive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && alive(pid) {
			return true
		}
	}
	return false
}

// sysProcAs runs a command as cred.
func sysProcAs(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
