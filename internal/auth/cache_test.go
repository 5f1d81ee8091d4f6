package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/testenv"
)

// A cached store answers a verified key from memory: a revocation written by another process
// (another store over the same collection) is not seen until the entry expires, while one made
// through the caching store itself takes effect at once.
func TestCachedLookup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testenv.Mongo(t)
	other := NewStore(db)
	cached := NewStore(db).WithCache(time.Hour)

	k, plain, err := other.Create(ctx, NewKey{Name: "cached", Permission: PermWrite})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Lookup(ctx, plain); err != nil {
		t.Fatalf("first lookup: %v", err)
	}
	if err := other.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	got, err := cached.Lookup(ctx, plain)
	if err != nil || got.ID != k.ID {
		t.Fatalf("lookup within the TTL after another process revoked: %+v, %v; want the remembered key", got, err)
	}
	if _, err := NewStore(db).Lookup(ctx, plain); !errors.Is(err, ErrNotFound) {
		t.Fatalf("uncached lookup of a revoked key: %v, want ErrNotFound", err)
	}

	// A change through the caching store forgets what it remembered.
	if _, err := cached.Apply(ctx, k.ID, Update{Name: ptr("renamed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Lookup(ctx, plain); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup after a change through the caching store: %v, want ErrNotFound", err)
	}
}

// Unknown keys are never remembered: a key created after a failed lookup works at once.
func TestCachedLookupRemembersOnlyActiveKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testenv.Mongo(t)
	cached := NewStore(db).WithCache(time.Hour)
	plain, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Lookup(ctx, plain); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	if _, _, err := NewStore(db).Create(ctx, NewKey{Name: "late", Permission: PermRead, Plaintext: plain}); err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Lookup(ctx, plain); err != nil {
		t.Fatalf("key created after a failed lookup: %v", err)
	}
}

// The entry expires after the TTL: the revocation is then seen.
func TestCachedLookupExpires(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testenv.Mongo(t)
	cached := NewStore(db).WithCache(50 * time.Millisecond)
	k, plain, err := NewStore(db).Create(ctx, NewKey{Name: "short", Permission: PermRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Lookup(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if err := NewStore(db).Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := cached.Lookup(ctx, plain); errors.Is(err, ErrNotFound) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the revoked key is still accepted long after the TTL")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A burst of requests with a key that is not remembered (new, or its entry just expired) reads
// it once: the concurrent lookups of one hash wait for the same read, and any that starts after
// it finds the key remembered.
func TestConcurrentLookupsOfOneKeyReadItOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testenv.Mongo(t)
	k, plain, err := NewStore(db).Create(ctx, NewKey{Name: "burst", Permission: PermRead})
	if err != nil {
		t.Fatal(err)
	}
	cached := NewStore(db).WithCache(time.Hour)
	tctx, tally := mongox.WithTally(ctx)
	const requests = 32
	testenv.AtOnce(t, requests, func(int) error {
		got, err := cached.Lookup(tctx, plain)
		if err == nil && got.ID != k.ID {
			err = fmt.Errorf("looked up %s; want %s", got.ID, k.ID)
		}
		return err
	})
	finds := 0
	for _, c := range tally.Commands() {
		if c.Name == "find" {
			finds++
		}
	}
	if finds != 1 {
		t.Errorf("%d concurrent lookups sent %d finds (%s); want 1", requests, finds, tally)
	}
}
