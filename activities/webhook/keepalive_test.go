package webhook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// keepAlive beats while the work runs and never once after stop has returned.
func TestKeepAliveBeatsUntilStopped(t *testing.T) {
	var beats atomic.Int32
	stop := keepAlive(context.Background(), 5*time.Millisecond, func() { beats.Add(1) })
	time.Sleep(100 * time.Millisecond)
	stop()
	n := beats.Load()
	time.Sleep(30 * time.Millisecond)
	if got := beats.Load(); got != n {
		t.Fatalf("%d beats after stop returned", got-n)
	}
	if n < 3 {
		t.Fatalf("%d beats in 100 ms at a 5 ms interval, want several", n)
	}
}

// A cancelled activity context ends the beats even before stop is called.
func TestKeepAliveEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var beats atomic.Int32
	stop := keepAlive(ctx, time.Millisecond, func() { beats.Add(1) })
	defer stop()
	cancel()
	time.Sleep(10 * time.Millisecond)
	n := beats.Load()
	time.Sleep(20 * time.Millisecond)
	if got := beats.Load(); got != n {
		t.Fatalf("%d beats after the context ended", got-n)
	}
}
