package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// providerCacheTTL is how long a worker reuses a provider document (base URL, auth header) before
// reading it again: every vendor call needs it, and it changes only when an operator PUTs the
// provider, which then reaches every worker within this time.
const providerCacheTTL = 5 * time.Second

// providerCache keeps recently read providers; the zero value is ready to use. It is a cache of
// configuration, not state: a worker that has none reads Mongo.
type providerCache struct {
	mu      sync.Mutex
	entries map[string]cachedProvider
}

type cachedProvider struct {
	p  *pipeline.Provider
	at time.Time
}

// get returns the provider, from the cache while it is fresh.
func (c *providerCache) get(ctx context.Context, ref string, load func(context.Context, string) (*pipeline.Provider, error)) (*pipeline.Provider, error) {
	c.mu.Lock()
	e, ok := c.entries[ref]
	c.mu.Unlock()
	if ok && time.Since(e.at) < providerCacheTTL {
		return e.p, nil
	}
	p, err := load(ctx, ref)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]cachedProvider{}
	}
	c.entries[ref] = cachedProvider{p: p, at: time.Now()}
	c.mu.Unlock()
	return p, nil
}
