package countscript

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

type redisBackend struct {
	name   string
	rdb    redis.UniversalClient
	prefix string
	mini   *miniredis.Miniredis // nil for real Redis
}

// redisBackends gives a real Redis (REDIS_URL or 127.0.0.1:6379) and a
// miniredis, each with a unique key prefix so parallel packages never meet.
func redisBackends(t testing.TB) []redisBackend {
	t.Helper()
	var out []redisBackend
	if rdb, ok := realRedis(t); ok {
		out = append(out, redisBackend{name: "redis", rdb: rdb, prefix: uniquePrefix()})
	}
	mini := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mini.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return append(out, redisBackend{name: "miniredis", rdb: rdb, prefix: uniquePrefix(), mini: mini})
}

func realRedis(t testing.TB) (redis.UniversalClient, bool) {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	explicit := url != ""
	if !explicit {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		if explicit {
			t.Fatalf("REDIS_URL %s unreachable: %v", url, err)
		}
		t.Logf("no real Redis at %s (%v); miniredis only", url, err)
		return nil, false
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, true
}

func uniquePrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "test:crawl:" + hex.EncodeToString(b) + ":"
}
