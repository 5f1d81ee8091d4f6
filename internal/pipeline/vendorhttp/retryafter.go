package vendorhttp

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultRetryAfterMax is the longest Retry-After honoured when Client.RetryAfterMax is unset
// (PIPELINE_RETRY_AFTER_MAX).
const DefaultRetryAfterMax = 5 * time.Minute

// minRetryDelay stands for "retry at once" (Retry-After: 0, or a date already past): Temporal
// reads a zero next-retry delay as "use the retry policy's interval".
const minRetryDelay = 100 * time.Millisecond

// ParseRetryAfter reads a Retry-After field value (RFC 9110 §10.2.3): delay-seconds (1*DIGIT)
// or an HTTP-date in any of the three formats a recipient must accept (§5.6.7). A date is
// measured from now; a date in the past means "now" (0). ok is false for anything else (empty,
// negative, fractional, garbage). An absurdly large value saturates rather than overflowing.
func ParseRetryAfter(value string, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > math.MaxInt64/uint64(time.Second) {
			return time.Duration(math.MaxInt64), true // all digits, so only a range error
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
