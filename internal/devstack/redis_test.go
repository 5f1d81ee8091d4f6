package devstack

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Every key under the prefix goes, more than one UNLINK's worth included;
// keys outside it stay.
func TestRemoveKeysRemovesOnlyThePrefix(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	for i := range 2500 {
		c.Set(ctx, fmt.Sprintf("run:a:%d", i), 1, 0)
	}
	c.HSet(ctx, "run:ab", "f", 1) // shares the prefix's text but not its separator
	c.Set(ctx, "other:a:1", 1, 0)
	if err := RemoveKeys(ctx, c, "run:a:"); err != nil {
		t.Fatal(err)
	}
	if left := c.Keys(ctx, "*").Val(); len(left) != 2 {
		t.Fatalf("keys left: %v, want run:ab and other:a:1", left)
	}
}

// A prefix is text, not a pattern: its glob characters match only themselves, so a run whose
// prefix holds one removes its own keys and no one else's.
func TestRemoveKeysTakesThePrefixLiterally(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	for _, k := range []string{"r[ab]*?\\:1", "ra*?\\:1", "rb:1", "r[ab]x:1"} {
		c.Set(ctx, k, 1, 0)
	}
	if err := RemoveKeys(ctx, c, "r[ab]*?\\:"); err != nil {
		t.Fatal(err)
	}
	left := c.Keys(ctx, "*").Val()
	slices.Sort(left)
	if want := []string{"r[ab]x:1", "ra*?\\:1", "rb:1"}; !slices.Equal(left, want) {
		t.Fatalf("keys left: %q, want %q", left, want)
	}
}
