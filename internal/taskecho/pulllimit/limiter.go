// Package pulllimit enforces TaskEcho's per-API-key pull limits (rate per minute
// and per hour, a daily quota of pulled tasks, a minimum interval between pulls) in Redis, so
// that every API replica shares one budget per key.
package pulllimit

import (
	"context"
	"log/slog"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/taskloom/taskloom/internal/config"
)

// Limits are the pull limits, per API key. Zero disables a limit.
type Limits struct {
	PerMinute   int           // pull_rate_limit, per minute
	PerHour     int           // pull_rate_limit, per hour
	DailyQuota  int           // pull_quota: tasks per UTC day
	MinInterval time.Duration // minimum time between two pulls
	// AlertPerMinute logs a warning (possible abuse) when a key's pulls in the current minute
	// exceed it, whether or not they are refused.
	AlertPerMinute int
}

// FromConfig maps the env configuration onto the limits.
func FromConfig(c config.Echo) Limits {
	return Limits{
		PerMinute: c.PullRateLimitPerMinute, PerHour: c.PullRateLimitPerHour, DailyQuota: c.PullQuota,
		MinInterval: c.PullMinInterval, AlertPerMinute: c.AlertMaxPullsPerMinute,
	}
}

// Limit reasons (the reason label of taskloom_echo_rate_limited_total).
const (
	Minute   = "per_minute"
	Hour     = "per_hour"
	Quota    = "daily_quota"
	Interval = "min_interval"
)

// Metrics are the limiter's collectors; the echo service registers them with its own
// (echo.Metrics RateLimited and RateLimitErrors).
type Metrics struct {
	// Refused counts pulls refused with 429, by reason.
	Refused *prometheus.CounterVec
	// Failures counts Redis failures, after which the pull was let through.
	Failures prometheus.Counter
}

// Decision is the limiter's answer for one pull call.
type Decision struct {
	Allowed    bool
	Reason     string
	RetryAfter time.Duration
	// Limit/Remaining/Reset describe the per-minute window (X-RateLimit-*); zero Limit means the
	// limiter had nothing to report (disabled or failed open).
	Limit     int
	Remaining int
	Reset     time.Time
	// QuotaLimit/QuotaRemaining are the daily pulled-task quota (X-Quota-*); -1 when unknown.
	QuotaLimit     int
	QuotaRemaining int
}

// Limiter enforces Limits in Redis with go-redis/redis_rate (GCRA) plus a daily counter and
// a SET NX PX interval key, so every API replica shares the same budget. When Redis fails it
// fails open: the pull goes through, an error is logged and taskloom_echo_ratelimit_errors_total
// counts it — a limiter outage must never turn into refused pulls or 500s.
type Limiter struct {
	rdb     redis.UniversalClient
	rate    *redis_rate.Limiter
	prefix  string
	limits  Limits
	metrics Metrics
	log     *slog.Logger
	now     func() time.Time
}

// New builds a limiter; prefix namespaces its keys (e.g. the platform's Redis key prefix).
func New(rdb redis.UniversalClient, prefix string, limits Limits, metrics Metrics, log *slog.Logger) *Limiter {
	if log == nil {
		log = slog.Default()
	}
	return &Limiter{rdb: rdb, rate: redis_rate.NewLimiter(rdb), prefix: prefix + "echo:pull:", limits: limits,
		metrics: metrics, log: log, now: time.Now}
}

// Check decides whether keyID may pull now. It consumes one request from the rate windows.
func (l *Limiter) Check(ctx context.Context, keyID string) Decision {
	d := Decision{Allowed: true, QuotaLimit: -1, QuotaRemaining: -1}
	if l.limits.MinInterval > 0 {
		ok, err := l.rdb.SetNX(ctx, l.prefix+"interval:"+keyID, 1, l.limits.MinInterval).Result()
		if err != nil {
			return l.failOpen(ctx, err)
		}
		if !ok {
			ttl, _ := l.rdb.PTTL(ctx, l.prefix+"interval:"+keyID).Result()
			return l.refuse(d, Interval, max(ttl, time.Millisecond))
		}
	}
	if l.limits.PerMinute > 0 {
		r, err := l.rate.Allow(ctx, l.prefix+"min:"+keyID, redis_rate.PerMinute(l.limits.PerMinute))
		if err != nil {
			return l.failOpen(ctx, err)
		}
		d.Limit, d.Remaining, d.Reset = l.limits.PerMinute, r.Remaining, l.now().Add(r.ResetAfter)
		l.alertRate(ctx, keyID, l.limits.PerMinute-r.Remaining)
		if r.Allowed == 0 {
			return l.refuse(d, Minute, r.RetryAfter)
		}
	}
	if l.limits.PerHour > 0 {
		r, err := l.rate.Allow(ctx, l.prefix+"hour:"+keyID, redis_rate.PerHour(l.limits.PerHour))
		if err != nil {
			return l.failOpen(ctx, err)
		}
		if r.Allowed == 0 {
			return l.refuse(d, Hour, r.RetryAfter)
		}
	}
	if l.limits.DailyQuota > 0 {
		used, err := l.rdb.Get(ctx, l.quotaKey(keyID)).Int()
		if err != nil && err != redis.Nil {
			return l.failOpen(ctx, err)
		}
		d.QuotaLimit, d.QuotaRemaining = l.limits.DailyQuota, max(l.limits.DailyQuota-used, 0)
		if d.QuotaRemaining == 0 {
			return l.refuse(d, Quota, l.untilMidnight())
		}
	}
	return d
}

// Consume charges n pulled tasks to keyID's daily quota and returns the quota left (-1 when
// unknown or unlimited).
func (l *Limiter) Consume(ctx context.Context, keyID string, n int) int {
	if l.limits.DailyQuota <= 0 {
		return -1
	}
	key := l.quotaKey(keyID)
	pipe := l.rdb.TxPipeline()
	incr := pipe.IncrBy(ctx, key, int64(n))
	pipe.Expire(ctx, key, l.untilMidnight()+time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		l.failOpen(ctx, err)
		return -1
	}
	return max(l.limits.DailyQuota-int(incr.Val()), 0)
}

func (l *Limiter) quotaKey(keyID string) string {
	return l.prefix + "quota:" + l.now().UTC().Format("2006-01-02") + ":" + keyID
}

func (l *Limiter) untilMidnight() time.Duration {
	now := l.now().UTC()
	return now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now)
}

func (l *Limiter) refuse(d Decision, reason string, retry time.Duration) Decision {
	d.Allowed, d.Reason, d.RetryAfter = false, reason, retry
	l.metrics.Refused.WithLabelValues(reason).Inc()
	return d
}

func (l *Limiter) failOpen(ctx context.Context, err error) Decision {
	l.metrics.Failures.Inc()
	l.log.ErrorContext(ctx, "echo pull limiter unavailable, allowing the pull", "err", err)
	return Decision{Allowed: true, QuotaLimit: -1, QuotaRemaining: -1}
}

func (l *Limiter) alertRate(ctx context.Context, keyID string, used int) {
	if l.limits.AlertPerMinute > 0 && used > l.limits.AlertPerMinute {
		l.log.WarnContext(ctx, "echo alert: pull request rate above threshold", "alert", "pull_rate_high",
			"api_key_id", keyID, "pulls_this_minute", used, "threshold", l.limits.AlertPerMinute)
	}
}
