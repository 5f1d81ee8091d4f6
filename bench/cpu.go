package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuUse is the CPU time each process of the stack has used so far, by role, read from Linux's
// /proc. Unlike the commands it is a timing, and moves with the machine, but it says where a
// unit's CPU goes on the shared cores, which is what explains a throughput ratio.
type cpuUse map[string]time.Duration

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

func (r *run) cpuUse() cpuUse {
	u := cpuUse{}
	for role, pids := range r.app.procs {
		for _, pid := range pids {
			if d, err := procCPU(pid); err == nil {
				u[role] += d
			}
		}
	}
	return u
}

// perUnit is the CPU each role used since before, per unit, largest first, e.g. "temporal
// server 17.0 ms, ferretdb 7.1 ms, …".
func (u cpuUse) perUnit(before cpuUse, n int) string {
	return u.perUnitIn(before, n, time.Millisecond, "ms")
}

// perUnitMicros is perUnit in µs, for units that take a few µs each, such as a tweet.
func (u cpuUse) perUnitMicros(before cpuUse, n int) string {
	return u.perUnitIn(before, n, time.Microsecond, "µs")
}

func (u cpuUse) perUnitIn(before cpuUse, n int, unit time.Duration, name string) string {
	roles := make([]string, 0, len(u))
	for role := range u {
		roles = append(roles, role)
	}
	used := func(role string) time.Duration { return u[role] - before[role] }
	slices.SortFunc(roles, func(a, b string) int { return cmp.Or(cmp.Compare(used(b), used(a)), strings.Compare(a, b)) })
	parts := make([]string, 0, len(roles))
	for _, role := range roles {
		parts = append(parts, fmt.Sprintf("%s %.1f %s", role, float64(used(role))/float64(unit)/float64(n), name))
	}
	return strings.Join(parts, ", ")
}

// procCPU is the user and system CPU time a process has used.
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no process")
	}
	_, f, err := procStat(strconv.Itoa(pid))
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// childPID is the pid of this process's child named comm (0 when there is none).
func childPID(comm string) int {
	dirs, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, d := range dirs {
		name, f, err := procStat(d.Name())
		if err == nil && name == comm && len(f) > 1 && f[1] == self {
			pid, _ := strconv.Atoi(d.Name())
			return pid
		}
	}
	return 0
}

// procStat reads /proc/<pid>/stat: the command name, which is in parentheses and may hold
// spaces, and the fields after it (state, parent pid, …).
func procStat(pid string) (comm string, fields []string, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", nil, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	return s[open+1 : end], strings.Fields(s[end+1:]), nil
}
