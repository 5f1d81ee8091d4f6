package taskecho

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho/pulllimit"
)

const decisionKey = "echo.ratelimit"

// Rate-limit headers. X-Quota-* report the daily pulled-task quota on every pull.
const (
	hLimit          = "X-RateLimit-Limit"
	hRemaining      = "X-RateLimit-Remaining"
	hReset          = "X-RateLimit-Reset"
	hQuotaLimit     = "X-Quota-Limit"
	hQuotaRemaining = "X-Quota-Remaining"
)

// rateLimit applies the per-key pull limits (per minute, per hour, daily quota, minimum
// interval) before a pull. Over a limit: 429 RATE_LIMIT_EXCEEDED with Retry-After and the
// X-RateLimit-* headers. When Redis is down the limiter lets the pull through (fail open).
func (a *api) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		keyID := "anonymous"
		if id := auth.From(c); id != nil {
			keyID = id.KeyID
		}
		d := a.limiter.Check(c.Request().Context(), keyID)
		headers := limitHeaders(d)
		for k, v := range headers {
			c.Response().Header().Set(k, v)
		}
		if !d.Allowed {
			e := httpx.TooMany(d.RetryAfter)
			e.Message = "拉取请求过于频繁，请稍后重试"
			e.Headers = headers
			e.Details = map[string]any{"reason": d.Reason, "retry_after": int((d.RetryAfter.Seconds()) + 0.999)}
			return e
		}
		c.Set(decisionKey, d)
		return next(c)
	}
}

func limitHeaders(d pulllimit.Decision) map[string]string {
	h := map[string]string{}
	if d.Limit > 0 {
		h[hLimit] = strconv.Itoa(d.Limit)
		h[hRemaining] = strconv.Itoa(d.Remaining)
		if !d.Allowed && d.Reason == pulllimit.Minute {
			h[hRemaining] = "0"
		}
		h[hReset] = ts(d.Reset)
	}
	if d.QuotaLimit >= 0 {
		h[hQuotaLimit] = strconv.Itoa(d.QuotaLimit)
		h[hQuotaRemaining] = strconv.Itoa(d.QuotaRemaining)
	}
	return h
}

// quotaLeft is how many tasks this pull may still hand out under the daily quota (-1 = no cap).
func quotaLeft(c echo.Context) int {
	if d, ok := c.Get(decisionKey).(pulllimit.Decision); ok {
		return d.QuotaRemaining
	}
	return -1
}

// consume charges n pulled tasks to the caller's quota and reports the remainder in a header.
func (a *api) consume(c echo.Context, n int) {
	id := auth.From(c)
	if id == nil || n == 0 {
		return
	}
	if left := a.limiter.Consume(c.Request().Context(), id.KeyID, n); left >= 0 {
		c.Response().Header().Set(hQuotaRemaining, strconv.Itoa(left))
	}
}
