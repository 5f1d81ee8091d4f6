package main

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestStartRecordsAndKillLeavesNoProcess: a started process leads its own process group, its
// record reads back, and kill takes its child with it.
func TestStartRecordsAndKillLeavesNoProcess(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	l := layout{t.TempDir()}
	// The shell's child sleeps in the same process group.
	p := proc{Name: "sleeper", Argv: []string{sh, "-c", "sleep 60 & wait"}, Env: environ(kv{"X", "1"}), Dir: l.dir, Ports: Ports{"sleeper": 1}}
	exited, err := l.start(p)
	if err != nil {
		t.Fatal(err)
	}
	pid, up := l.running("sleeper")
	if !up {
		t.Fatal("not running after start")
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("pgid %d (%v), want its own group %d", pgid, err, pid)
	}
	rec, err := l.recorded("sleeper")
	if err != nil || rec.Argv[2] != p.Argv[2] || rec.Env[len(rec.Env)-1] != "X=1" || rec.Ports["sleeper"] != 1 {
		t.Errorf("record %+v, %v", rec, err)
	}
	if err := l.kill("sleeper"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the process did not exit")
	}
	if groupHasLive(pid) {
		t.Error("a process of the group outlived kill")
	}
	if _, up := l.running("sleeper"); up {
		t.Error("running after kill")
	}
}

func TestStopOfANeverStartedProcessIsNoError(t *testing.T) {
	l := layout{t.TempDir()}
	if err := l.stop("api-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.recorded("api-1"); err == nil {
		t.Fatal("a record of a process never started")
	}
}
