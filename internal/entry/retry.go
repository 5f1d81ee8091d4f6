package entry

import (
	"time"

	"github.com/taskloom/taskloom/internal/config"
)

// RetryDelays is the retry curve of a channel for a budget of retries (at least one entry):
// telegram doubles from ENTRY_TELEGRAM_RETRY_BASE up to ENTRY_TELEGRAM_RETRY_CAP; http and cli
// follow ENTRY_HTTP_RETRY_DELAYS, repeating its last delay. Separate curves keep one noisy intake
// from starving the others (no retry storm).
func RetryDelays(c *config.Entry, channel string, budget int) []time.Duration {
	n := max(budget, 1)
	out := make([]time.Duration, n)
	for i := range out {
		if channel == ChannelTelegram {
			d := c.TelegramRetryBase
			for j := 0; j < i && d < c.TelegramRetryCap; j++ {
				d *= 2
			}
			out[i] = min(d, c.TelegramRetryCap)
			continue
		}
		out[i] = c.HTTPRetryDelays[min(i, len(c.HTTPRetryDelays)-1)]
	}
	return out
}
