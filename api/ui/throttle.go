package ui

import (
	"context"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"
)

// Sign-in attempts per username and per client address: a burst (a person mistyping) and then
// one more attempt per minute. bcrypt makes each guess cost ~0.25 s of CPU; the limits make
// password guessing slow as well as expensive, and they live in Redis so that every API replica
// counts the same attempts.
var (
	loginPerUser = redis_rate.Limit{Rate: 10, Burst: 10, Period: 10 * time.Minute}
	loginPerIP   = redis_rate.Limit{Rate: 30, Burst: 30, Period: 30 * time.Minute}
)

// throttle limits sign-in attempts; it is off when the platform has no Redis.
type throttle struct {
	rate   *redis_rate.Limiter
	prefix string
}

// allow records one attempt for username from the request's address and says how long to wait
// when either limit is spent. A Redis failure lets the attempt through: the password check
// still protects the account, and an outage must not lock administrators out.
func (th *throttle) allow(c echo.Context, username string) (time.Duration, bool) {
	if th == nil || th.rate == nil {
		return 0, true
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	for _, k := range []struct {
		key   string
		limit redis_rate.Limit
	}{
		{"user:" + strings.ToLower(strings.TrimSpace(username)), loginPerUser},
		{"ip:" + c.RealIP(), loginPerIP},
	} {
		res, err := th.rate.Allow(ctx, th.prefix+k.key, k.limit)
		if err != nil {
			return 0, true
		}
		if res.Allowed == 0 {
			return res.RetryAfter, false
		}
	}
	return 0, true
}
