package feishu

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds the backoff for rate-limit and write-conflict answers. Real Feishu allows
// 20 searches and 50 writes per second per app and serialises writes to a base, so short
// jittered waits clear both.
type RetryPolicy struct {
	Attempts int           // total tries including the first
	Initial  time.Duration // first wait
	Max      time.Duration // cap per wait
}

// DefaultRetryPolicy is used when Config.Retry is zero.
var DefaultRetryPolicy = RetryPolicy{Attempts: 6, Initial: 200 * time.Millisecond, Max: 5 * time.Second}

// retry runs fn until it succeeds, fails with a non-retryable error, or attempts run out.
func (p RetryPolicy) retry(ctx context.Context, fn func() error) error {
	wait := p.Initial
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || !IsRetryable(err) || attempt >= p.Attempts {
			return err
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.HTTPStatus == 429 && wait < time.Second {
			wait = time.Second // gateway limits reset per second
		}
		jittered := wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
		t := time.NewTimer(jittered)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, p.Max)
	}
}
