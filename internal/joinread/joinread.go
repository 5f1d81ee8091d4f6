// Package joinread joins concurrent reads of one key into one: a burst of requests that all miss
// a cache (a new entry, or one that just expired) costs one read, not one per request.
package joinread

import (
	"context"
	"fmt"

	"golang.org/x/sync/singleflight"
)

// Do runs read once for all concurrent callers with the same key and hands each the result. The
// read runs without the first caller's cancellation — one request giving up must not fail the
// others waiting on it — while each caller still stops waiting when its own context ends.
func Do[T any](g *singleflight.Group, ctx context.Context, key string, read func(context.Context) (T, error)) (T, error) {
	ch := g.DoChan(key, func() (any, error) { return read(context.WithoutCancel(ctx)) })
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero T
			return zero, r.Err
		}
		return r.Val.(T), nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("wait for %s: %w", key, ctx.Err())
	}
}
