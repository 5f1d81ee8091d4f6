package httpx

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// StoreRetryAfter is the Retry-After a client gets when a store is down.
const StoreRetryAfter = 5 * time.Second

// FromStore maps a Mongo or Redis error to an HTTP error: an unreachable store or a timeout is
// 503 with Retry-After, a duplicate key 409, no document 404. Anything else passes through
// (and renders as 500), because it is a bug rather than a client's or a dependency's fault.
func FromStore(err error) error {
	if err == nil {
		return nil
	}
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	switch {
	case errors.Is(err, mongo.ErrNoDocuments), errors.Is(err, redis.Nil):
		return NotFound("resource")
	case mongo.IsDuplicateKeyError(err):
		return Conflict("a resource with the same key already exists")
	case IsUnavailable(err):
		return Unavailable(storeName(err), StoreRetryAfter)
	}
	return err
}

// IsUnavailable reports whether err means a dependency could not be reached in time.
func IsUnavailable(err error) bool {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || mongo.IsTimeout(err) || mongo.IsNetworkError(err) ||
		errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) || errors.Is(err, mongo.ErrClientDisconnected) {
		return true
	}
	// The driver's server-selection error lives in an internal package; its text is stable.
	msg := err.Error()
	return strings.Contains(msg, "server selection error") || strings.Contains(msg, "connection refused")
}

func storeName(err error) string {
	if strings.Contains(err.Error(), "redis") {
		return "redis"
	}
	return "mongo"
}
