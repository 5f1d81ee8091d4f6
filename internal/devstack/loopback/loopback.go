// Package loopback hands out loopback addresses for the stand-ins and test servers.
package loopback

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports are drawn from [lowestPort, the kernel's ephemeral range): below lowestPort sit the
// well-known and registered services a developer machine runs (Redis 6379, PostgreSQL 5432, …).
const (
	lowestPort = 10000
	// ephemeralDefault is the start of the ephemeral range where it cannot be read: Linux's
	// default (macOS starts at 49152, which is above it).
	ephemeralDefault = 32768
	attempts         = 200
)

var (
	mu sync.Mutex
	// handedOut keeps this process from handing one port out twice: two servers of one test
	// binary asking at the same moment would otherwise race for a port both were told is free.
	handedOut = map[int]bool{}
)

// FreeAddr returns a loopback address whose port nothing listens on right now, for a server
// that binds it a moment later. The port comes from below the kernel's ephemeral range, not
// from a listen on port 0: a port the kernel picks for :0 is an ephemeral one, and once our
// probe releases it the next outbound connection of any process on the machine may take it as
// its local port before our server binds it. That is how a Temporal dev server's Web UI lost
// its port in a parallel `go test ./...` and the dev server exited. A port below the range is
// only ever taken by a listener that asks for it.
func FreeAddr() (string, error) {
	hi := ephemeralLow()
	if hi <= lowestPort {
		return kernelPicked() // no room below the range: the kernel's choice, as before
	}
	mu.Lock()
	defer mu.Unlock()
	for range attempts {
		port := lowestPort + rand.IntN(hi-lowestPort)
		if handedOut[port] {
			continue
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken
		}
		_ = l.Close()
		handedOut[port] = true
		return addr, nil
	}
	return kernelPicked()
}

func kernelPicked() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range), or ephemeralDefault where it cannot be read; read
// once per process.
var ephemeralLow = sync.OnceValue(readEphemeralLow)

func readEphemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return ephemeralDefault
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		if low, err := strconv.Atoi(f[0]); err == nil && low > 0 {
			return low
		}
	}
	return ephemeralDefault
}

// PreferredOrFree returns preferred when it can be listened on right now, else a loopback
// address with a free port, so a stand-in keeps its documented port across restarts and still
// starts when something else holds it. moved says which happened.
func PreferredOrFree(preferred string) (addr string, moved bool, err error) {
	if l, err := net.Listen("tcp", preferred); err == nil {
		_ = l.Close()
		return preferred, false, nil
	}
	addr, err = FreeAddr()
	return addr, true, err
}
