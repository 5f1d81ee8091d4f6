package auth

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// cachedKeys bounds how many verified keys one process remembers; a deployment has a handful of
// keys, so the bound only matters against a client cycling through many valid ones.
const cachedKeys = 1024

// WithCache makes Lookup remember the active keys it verified for ttl, so an authenticated
// request costs no MongoDB command while its key is fresh (a busy client sends the same key on
// every request). Only active keys are remembered: a new key works at once on every replica.
// A change made through this Store (Apply, Revoke, Delete, Ensure) forgets every remembered key
// at once; one made through another process reaches this one within ttl (API_KEY_CACHE_TTL), the
// delay an operator waits for a revoked key to stop working everywhere. ttl ≤ 0 leaves the store uncached.
func (s *Store) WithCache(ttl time.Duration) *Store {
	if ttl > 0 {
		s.verified = expirable.NewLRU[string, Key](cachedKeys, nil, ttl)
	}
	return s
}

// remembered returns the cached active key with hash.
func (s *Store) remembered(hash string) (Key, bool) {
	if s.verified == nil {
		return Key{}, false
	}
	return s.verified.Get(hash)
}

func (s *Store) remember(k Key) {
	if s.verified != nil {
		s.verified.Add(k.Hash, k)
	}
}

// forget drops every remembered key after a change: changes are rare and name keys by id, not
// by the hash the cache is keyed on.
func (s *Store) forget() {
	if s.verified != nil {
		s.verified.Purge()
	}
}
