// Package pulllimit enforces TaskEcho's per-API-key pull limits (rate per minute
// and per hour, a daily quota of pulled tasks, a minimum interval between pulls) in Redis, so
// that every API replica shares one budget per key.
package pulllimit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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

// Limiter enforces Limits in Redis, so every API replica shares the same budget. A pull costs at
// most two Redis commands: Check is one script call (checkScript) that applies the minimum
// interval, both GCRA rate windows and the daily quota atomically, and Consume one more
// (consumeScript) that charges the tasks handed out. When Redis fails it fails open: the pull goes
// through, an error is logged and taskloom_echo_ratelimit_errors_total counts it — a limiter
// outage must never turn into refused pulls or 500s.
type Limiter struct {
	rdb     redis.UniversalClient
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
	return &Limiter{rdb: rdb, prefix: prefix + "echo:pull:", limits: limits, metrics: metrics, log: log, now: time.Now}
}

// checkScript decides one pull for one key. KEYS: interval, per-minute window, per-hour window,
// today's quota counter. ARGV: now (ms), min interval (ms), per minute, per hour, daily quota; 0
// disables a limit. The limits apply in that order and the first refusal ends the script, so a
// refused pull charges only the limits before it (as separate checks would).
//
// A rate window is GCRA with a burst of the whole window: the key holds the theoretical arrival
// time (tat, ms) of the next request; a request is allowed while tat+step−period ≤ now, and moves
// tat by step = period/limit. It answers {allowed, retry after, remaining, reset after}.
//
// The reply: {reason (0 allowed, 1 interval, 2 minute, 3 hour, 4 quota), retry after ms,
// minute remaining, minute reset after ms, quota used}.
var checkScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local function window(key, limit, period)
  local step = period / limit
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local next_tat = tat + step
  local diff = now - (next_tat - period)
  if diff < 0 then
    return false, math.ceil(-diff), 0, math.ceil(tat - now)
  end
  redis.call('SET', key, string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now))
  return true, 0, math.floor(diff / step), math.ceil(next_tat - now)
end
local interval, per_min, per_hour, quota = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if interval > 0 and not redis.call('SET', KEYS[1], 1, 'NX', 'PX', interval) then
  return {1, math.max(redis.call('PTTL', KEYS[1]), 1), 0, 0, 0}
end
local remaining, reset = 0, 0
if per_min > 0 then
  local ok, retry
  ok, retry, remaining, reset = window(KEYS[2], per_min, 60000)
  if not ok then return {2, retry, remaining, reset, 0} end
end
if per_hour > 0 then
  local ok, retry = window(KEYS[3], per_hour, 3600000)
  if not ok then return {3, retry, remaining, reset, 0} end
end
local used = 0
if quota > 0 then
  used = tonumber(redis.call('GET', KEYS[4]) or '0')
  if used >= quota then return {4, 0, remaining, reset, used} end
end
return {0, 0, remaining, reset, used}
`)

// consumeScript adds ARGV[1] tasks to the quota counter KEYS[1], which expires ARGV[2] ms later,
// and returns the new count.
var consumeScript = redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`)

// reasons maps checkScript's reason codes onto the limit reasons.
var reasons = [...]string{1: Interval, 2: Minute, 3: Hour, 4: Quota}

// Check decides whether keyID may pull now. It consumes one request from the rate windows.
func (l *Limiter) Check(ctx context.Context, keyID string) Decision {
	d := Decision{Allowed: true, QuotaLimit: -1, QuotaRemaining: -1}
	lim := l.limits
	if lim.MinInterval <= 0 && lim.PerMinute <= 0 && lim.PerHour <= 0 && lim.DailyQuota <= 0 {
		return d
	}
	now := l.now()
	keys := []string{l.key(keyID, "interval"), l.key(keyID, "min"), l.key(keyID, "hour"), l.quotaKey(keyID)}
	res, err := checkScript.Run(ctx, l.rdb, keys, now.UnixMilli(), lim.MinInterval.Milliseconds(),
		lim.PerMinute, lim.PerHour, lim.DailyQuota).Int64Slice()
	if err == nil && len(res) != 5 {
		err = fmt.Errorf("pull limit script answered %v", res)
	}
	if err != nil {
		return l.failOpen(ctx, err)
	}
	reason, retry, remaining, reset, used := res[0], ms(res[1]), int(res[2]), ms(res[3]), int(res[4])
	if lim.PerMinute > 0 && reason != 1 {
		d.Limit, d.Remaining, d.Reset = lim.PerMinute, remaining, now.Add(reset)
		l.alertRate(ctx, keyID, lim.PerMinute-remaining)
	}
	if lim.DailyQuota > 0 && (reason == 0 || reason == 4) {
		d.QuotaLimit, d.QuotaRemaining = lim.DailyQuota, max(lim.DailyQuota-used, 0)
	}
	switch reason {
	case 0:
		return d
	case 4:
		return l.refuse(d, Quota, l.untilMidnight())
	default:
		return l.refuse(d, reasons[reason], max(retry, time.Millisecond))
	}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Consume charges n pulled tasks to keyID's daily quota and returns the quota left (-1 when
// unknown or unlimited).
func (l *Limiter) Consume(ctx context.Context, keyID string, n int) int {
	if l.limits.DailyQuota <= 0 {
		return -1
	}
	used, err := consumeScript.Run(ctx, l.rdb, []string{l.quotaKey(keyID)}, n,
		(l.untilMidnight() + time.Hour).Milliseconds()).Int()
	if err != nil {
		l.failOpen(ctx, err)
		return -1
	}
	return max(l.limits.DailyQuota-used, 0)
}

// key names one of keyID's limiter keys. The key id is a Redis Cluster hash tag, so that every
// key of one script call lives in one slot.
func (l *Limiter) key(keyID, what string) string {
	return l.prefix + "{" + keyID + "}:" + what
}

func (l *Limiter) quotaKey(keyID string) string {
	return l.key(keyID, "quota:"+l.now().UTC().Format("2006-01-02"))
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
