package pulllimit

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newMetrics() Metrics {
	return Metrics{
		Refused:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"}),
		Failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "failures"}),
	}
}

func TestLimiterPerMinuteQuotaAndInterval(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	m := newMetrics()
	l := New(rdb, prefix, Limits{PerMinute: 2, DailyQuota: 5}, m, nil)
	ctx := context.Background()
	for i := range 2 {
		if d := l.Check(ctx, "k"); !d.Allowed || d.Remaining != 1-i || d.QuotaRemaining != 5 {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	d := l.Check(ctx, "k")
	if d.Allowed || d.Reason != Minute || d.RetryAfter <= 0 {
		t.Fatalf("third call %+v, want refused per minute", d)
	}
	if left := l.Consume(ctx, "q", 5); left != 0 {
		t.Fatalf("quota left %d", left)
	}
	if d := l.Check(ctx, "q"); d.Allowed || d.Reason != Quota || d.RetryAfter > 24*time.Hour {
		t.Fatalf("exhausted quota %+v", d)
	}
	iv := New(rdb, prefix, Limits{MinInterval: time.Minute}, m, nil)
	if d := iv.Check(ctx, "i"); !d.Allowed {
		t.Fatalf("first pull %+v", d)
	}
	if d := iv.Check(ctx, "i"); d.Allowed || d.Reason != Interval {
		t.Fatalf("second pull within the interval %+v", d)
	}
	if got := counterValue(t, m.Refused.WithLabelValues(Minute)); got != 1 {
		t.Fatalf("rate_limited{per_minute} = %v", got)
	}
}

// With Redis unreachable the limiter lets the pull through and counts the failure.
func TestLimiterFailsOpen(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	m := newMetrics()
	l := New(rdb, "x:", Limits{PerMinute: 1, PerHour: 1, DailyQuota: 1, MinInterval: time.Hour}, m, nil)
	for range 3 {
		if d := l.Check(context.Background(), "k"); !d.Allowed || d.QuotaRemaining != -1 {
			t.Fatalf("decision %+v, want allowed", d)
		}
	}
	if l.Consume(context.Background(), "k", 3) != -1 {
		t.Fatal("consume must report unknown quota")
	}
	if got := counterValue(t, m.Failures); got != 4 {
		t.Fatalf("ratelimit_errors_total = %v, want 4", got)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// commandCounter counts the commands a Redis client sends.
type commandCounter struct{ n int }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n++; return next(ctx, cmd) }
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n += len(cmds); return next(ctx, cmds) }
}

// With every limit on, a pull costs one Redis command to decide (the check script) and one to
// charge the quota, once the scripts are loaded; the per-hour window refuses on its own, and a
// refusal by it still charged the per-minute window, as separate checks in that order would.
func TestLimiterIsOneScriptCallPerCheck(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	counter := &commandCounter{}
	rdb.AddHook(counter)
	m := newMetrics()
	l := New(rdb, prefix, Limits{PerMinute: 10, PerHour: 2, DailyQuota: 100, MinInterval: time.Millisecond}, m, nil)
	ctx := context.Background()
	l.Check(ctx, "warm")
	l.Consume(ctx, "warm", 1) // loads both scripts
	counter.n = 0
	d := l.Check(ctx, "k")
	if !d.Allowed || d.Limit != 10 || d.Remaining != 9 || d.QuotaRemaining != 100 || counter.n != 1 {
		t.Fatalf("first check %+v in %d commands, want allowed in 1", d, counter.n)
	}
	if left := l.Consume(ctx, "k", 30); left != 70 || counter.n != 2 {
		t.Fatalf("consume: %d left after %d commands, want 70 after 2", left, counter.n)
	}
	time.Sleep(2 * time.Millisecond) // past the minimum interval
	if d := l.Check(ctx, "k"); !d.Allowed || d.Remaining != 8 || d.QuotaRemaining != 70 {
		t.Fatalf("second check %+v", d)
	}
	time.Sleep(2 * time.Millisecond)
	d = l.Check(ctx, "k")
	if d.Allowed || d.Reason != Hour || d.RetryAfter <= 0 || d.RetryAfter > 30*time.Minute || d.Remaining != 7 {
		t.Fatalf("third check %+v, want refused per hour after the minute window charged", d)
	}
}
