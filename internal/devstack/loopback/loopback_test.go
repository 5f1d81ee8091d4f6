package loopback

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

func TestFreeAddrIsBelowTheEphemeralRangeAndListenable(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	if port < lowestPort || port >= ephemeralLow() {
		t.Fatalf("port %d is outside [%d, %d)", port, lowestPort, ephemeralLow())
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the address handed out: %v", err)
	}
	_ = l.Close()
}

// Servers of one process asking at the same moment get distinct ports. 1,000 random draws from
// the ~22,000 ports below Linux's default range would repeat some ~20 times without the
// process's record of what it handed out.
func TestFreeAddrHandsOutEachPortOnceInAProcess(t *testing.T) {
	const n = 1000
	addrs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a, err := FreeAddr()
			if err != nil {
				t.Error(err)
			}
			addrs[i] = a
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s handed out twice", a)
		}
		seen[a] = true
	}
}
