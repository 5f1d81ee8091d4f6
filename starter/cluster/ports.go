package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// portsFile, in CLUSTER_DIR, keeps every port the cluster listens on: chosen free at the first
// `up`, then reused by every restart, so URLs, the env file and the Temporal membership stay put.
const portsFile = "ports.json"

// Ports maps a port's name (see portNames) to its number.
type Ports map[string]int

// temporalServices are the Temporal server processes, in start order: the frontend first, alone,
// until it answers (it creates the cluster metadata on an empty database; started together, the
// services race to insert it and the losers exit), then the rest.
var temporalServices = []temporalService{
	{Name: "temporal-frontend", Service: "frontend"},
	{Name: "temporal-history-1", Service: "history"},
	{Name: "temporal-history-2", Service: "history"},
	{Name: "temporal-matching", Service: "matching"},
	{Name: "temporal-worker", Service: "worker"},
}

// temporalService is one Temporal server process: its process name and the service it runs.
type temporalService struct{ Name, Service string }

// portNames lists every named port of the cluster. Each Temporal process has its own gRPC,
// membership, metrics and pprof port (processes on one host cannot share them); the frontend
// also serves HTTP.
func portNames() []string {
	names := []string{"postgres", "redis", "temporal-frontend.http", "temporal-ui", "mongo", "kafka",
		"fakes.vendors", "fakes.feishu", "fakes.telegram", "fakes.receiver", "codec-server",
		"api-1", "api-2", "worker-1.metrics", "worker-2.metrics"}
	for _, s := range temporalServices {
		for _, kind := range []string{"grpc", "membership", "metrics", "pprof"} {
			names = append(names, s.Name+"."+kind)
		}
	}
	return names
}

// allocate returns kept plus a port for each name kept lacks, taken from free(name), never one
// already in use by another name. free may hand out a port twice (the OS reuses a port closed a
// moment ago); a repeat is drawn again.
func allocate(kept Ports, names []string, free func(name string) (int, error)) (Ports, error) {
	out := Ports{}
	used := map[int]bool{}
	for name, p := range kept {
		out[name] = p
		used[p] = true
	}
	for _, name := range names {
		if _, ok := out[name]; ok {
			continue
		}
		p, err := drawUnused(used, func() (int, error) { return free(name) })
		if err != nil {
			return nil, fmt.Errorf("port for %s: %w", name, err)
		}
		out[name], used[p] = p, true
	}
	return out, nil
}

// drawAttempts bounds how often drawUnused asks free for a port it has not handed out yet.
const drawAttempts = 100

func drawUnused(used map[int]bool, free func() (int, error)) (int, error) {
	for range drawAttempts {
		p, err := free()
		if err != nil {
			return 0, err
		}
		if !used[p] {
			return p, nil
		}
	}
	return 0, errors.New("no unused free port")
}

// Membership ports are stored in a smallint column (cluster_membership.rpc_port), so they must
// be below 32768, under the kernel's ephemeral range (32768–60999 by default) that freePort
// draws from; they are drawn at random from lowPorts and checked free.
const (
	lowPortMin = 20000
	lowPortMax = 32767
)

// freePort is a free loopback port for the named port: any the kernel chooses, or for a
// membership port one in [lowPortMin, lowPortMax].
func freePort(name string) (int, error) {
	if !strings.HasSuffix(name, ".membership") {
		return listenFree(0)
	}
	for range drawAttempts {
		if p, err := listenFree(lowPortMin + rand.IntN(lowPortMax-lowPortMin+1)); err == nil {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in %d-%d", lowPortMin, lowPortMax)
}

// listenFree listens on 127.0.0.1:port (0: any) and returns the port once closed again.
func listenFree(port int) (int, error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// loadPorts reads CLUSTER_DIR's ports, chooses the missing ones and writes the file back.
func loadPorts(dir string) (Ports, error) {
	path := filepath.Join(dir, portsFile)
	kept := Ports{}
	if err := readJSON(path, &kept); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ports, err := allocate(kept, portNames(), freePort)
	if err != nil {
		return nil, err
	}
	if len(ports) == len(kept) {
		return ports, nil
	}
	return ports, writeJSON(path, ports, 0o644)
}

// addr is 127.0.0.1:port of a named port.
func (p Ports) addr(name string) string { return fmt.Sprintf("127.0.0.1:%d", p[name]) }

// url is http://127.0.0.1:port of a named port.
func (p Ports) url(name string) string { return "http://" + p.addr(name) }

// of returns the named ports whose name starts with prefix (a process's own ports).
func (p Ports) of(prefix string) Ports {
	out := Ports{}
	for name, port := range p {
		if name == prefix || (len(name) > len(prefix) && name[:len(prefix)+1] == prefix+".") {
			out[name] = port
		}
	}
	return out
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any, mode os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
