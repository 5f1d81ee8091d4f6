package main

import (
	"errors"
	"strings"
	"testing"
)

func TestAllocateKeepsKeptPortsAndDrawsNoneTwice(t *testing.T) {
	// The OS hands out 7001 twice and 7000, which a kept port holds: both are drawn again.
	draws := []int{7000, 7001, 7001, 7002}
	free := func(string) (int, error) {
		if len(draws) == 0 {
			return 0, errors.New("no more ports")
		}
		p := draws[0]
		draws = draws[1:]
		return p, nil
	}
	got, err := allocate(Ports{"api-1": 7000}, []string{"api-1", "api-2", "mongo"}, free)
	if err != nil {
		t.Fatal(err)
	}
	want := Ports{"api-1": 7000, "api-2": 7001, "mongo": 7002}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for n, p := range want {
		if got[n] != p {
			t.Errorf("%s: got port %d, want %d", n, got[n], p)
		}
	}
}

func TestAllocateFailsWhenNoUnusedPortComes(t *testing.T) {
	_, err := allocate(Ports{"api-1": 7000}, []string{"api-2"}, func(string) (int, error) { return 7000, nil })
	if err == nil {
		t.Fatal("allocate succeeded although every free port was taken")
	}
}

func TestLoadPortsKeepsThePortsOfTheFirstStart(t *testing.T) {
	dir := t.TempDir()
	first, err := loadPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(portNames()) {
		t.Fatalf("%d ports for %d names", len(first), len(portNames()))
	}
	seen := map[int]string{}
	for n, p := range first {
		if strings.HasSuffix(n, ".membership") && p > lowPortMax {
			t.Errorf("%s is %d: the membership table stores it as a smallint", n, p)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("port %d given to %s and %s", p, n, other)
		}
		seen[p] = n
	}
	again, err := loadPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for n, p := range first {
		if again[n] != p {
			t.Errorf("%s moved from %d to %d", n, p, again[n])
		}
	}
}

func TestPortsOfSelectsOneProcesssPorts(t *testing.T) {
	p := Ports{"api-1": 1, "api-10": 2, "temporal-history-1.grpc": 3, "temporal-history-1.pprof": 4, "temporal-history-2.grpc": 5}
	if got := p.of("api-1"); len(got) != 1 || got["api-1"] != 1 {
		t.Errorf("of(api-1) = %v", got)
	}
	if got := p.of("temporal-history-1"); len(got) != 2 || got["temporal-history-1.grpc"] != 3 {
		t.Errorf("of(temporal-history-1) = %v", got)
	}
}
