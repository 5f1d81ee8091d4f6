package pipeline

import (
	"context"
	"sync"
	"time"
)

// providerCacheTTL is how long a worker reuses a provider's documents before reading them again:
// the providers document (base URL, auth header), which every vendor call needs and which changes
// only when an operator PUTs the provider, and its provider_health document, whose circuit breaker
// every call that starts work consults. A change reaches every worker within this time; the
// breaker never holds a call back on a cached view alone (breaker.go reads it again first).
const providerCacheTTL = 5 * time.Second

// providerCache keeps recently read documents by provider ref; the zero value is ready to use. It
// is a cache, not state: a worker that has none reads Mongo.
type providerCache[V any] struct {
	mu      sync.Mutex
	entries map[string]cached[V]
}

type cached[V any] struct {
	v  V
	at time.Time
}

// get returns the value, from the cache while it is fresh; fresh says it was just loaded.
func (c *providerCache[V]) get(ctx context.Context, ref string, load func(context.Context, string) (V, error)) (v V, fresh bool, err error) {
	c.mu.Lock()
	e, ok := c.entries[ref]
	c.mu.Unlock()
	if ok && time.Since(e.at) < providerCacheTTL {
		return e.v, false, nil
	}
	if v, err = load(ctx, ref); err != nil {
		return v, false, err
	}
	c.put(ref, v)
	return v, true, nil
}

// put stores a value just read or written.
func (c *providerCache[V]) put(ref string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cached[V]{}
	}
	c.entries[ref] = cached[V]{v: v, at: time.Now()}
}

// fresh returns the cached value while it is fresh.
func (c *providerCache[V]) fresh(ref string) (v V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[ref]
	if !ok || time.Since(e.at) >= providerCacheTTL {
		return v, false
	}
	return e.v, true
}
