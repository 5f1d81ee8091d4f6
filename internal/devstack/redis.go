package devstack

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RemoveKeys deletes every key under prefix, for a test or a bench run that
// wrote under a prefix of its own in a Redis others share: what it leaves
// would otherwise live out its TTL (a crawl progress hash keeps every tweet
// id it counted for 7 days). The prefix is matched as text: a glob character
// in it matches only itself.
func RemoveKeys(ctx context.Context, c redis.UniversalClient, prefix string) error {
	const batch = 1000
	keys := make([]string, 0, batch)
	unlink := func() error {
		if len(keys) == 0 {
			return nil
		}
		if err := c.Unlink(ctx, keys...).Err(); err != nil {
			return fmt.Errorf("remove keys %s*: %w", prefix, err)
		}
		keys = keys[:0]
		return nil
	}
	iter := c.Scan(ctx, 0, globEscaper.Replace(prefix)+"*", batch).Iterator()
	for iter.Next(ctx) {
		if keys = append(keys, iter.Val()); len(keys) == batch {
			if err := unlink(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("list keys %s*: %w", prefix, err)
	}
	return unlink()
}

// globEscaper quotes the characters SCAN's MATCH pattern gives a meaning to.
var globEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
