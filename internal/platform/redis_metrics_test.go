package platform

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

func TestRedisCounterCountsPipelinedCommandsOneByOne(t *testing.T) {
	srv := miniredis.RunT(t)
	reg := prometheus.NewRegistry()
	h := newRedisCounter(reg)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	rc.AddHook(h)
	ctx := context.Background()
	if err := rc.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "k")
		p.Incr(ctx, "k")
		p.Get(ctx, "k")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]float64{"set": 1, "incr": 2, "get": 1} {
		if got := testutil.ToFloat64(h.commands.WithLabelValues(cmd)); got != want {
			t.Errorf("%s counted %v times, want %v", cmd, got, want)
		}
	}
}
