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
