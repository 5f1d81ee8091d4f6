package worker

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
)

// A worker whose metrics address is taken (a `starter worker` beside `make dev`) fails with the
// variable's name before it touches Temporal: the platform here has no Temporal client, so
// polling would panic.
func TestRunFailsBeforePollingWhenTheMetricsAddressIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := &config.Config{Worker: config.Worker{MetricsAddr: taken.Addr().String()}}
	err = Run(context.Background(), &platform.Platform{Config: cfg}, nil)
	if err == nil || !strings.Contains(err.Error(), "WORKER_METRICS_ADDR "+taken.Addr().String()) {
		t.Fatalf("Run = %v, want a WORKER_METRICS_ADDR error", err)
	}
}
