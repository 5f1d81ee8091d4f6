package entry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/refusal/refusaltest"
)

// TestRefusalTableIsWhole: every kind is answered somewhere (over HTTP, or across Temporal with
// an error type), its sentinel is no other kind's, and the retry policy's list is exactly the
// non-retryable kinds that cross Temporal.
func TestRefusalTableIsWhole(t *testing.T) {
	for i, k := range entry.Refusals {
		if k.Sentinel == nil || (k.HTTPStatus == 0 && k.Type == "") || (k.HTTPStatus != 0 && k.Code == "") {
			t.Errorf("kind %d (%v): needs a sentinel and an HTTP status with its code, or an error type", i, k.Sentinel)
		}
		for _, other := range entry.Refusals[i+1:] {
			if errors.Is(other.Sentinel, k.Sentinel) || errors.Is(k.Sentinel, other.Sentinel) {
				t.Errorf("%v and %v cannot be told apart", k.Sentinel, other.Sentinel)
			}
		}
	}
	if got := entry.NonRetryableRefusalTypes(); !slices.Equal(got, []string{entry.ErrTypeTelegramRejected}) {
		t.Errorf("non-retryable types %v", got)
	}
}

// TestRefuseRaisesTheKind: an activity's refusal carries its kind's type and retryability (a
// 429 also its retry_after); any other error stays an ordinary, retried one.
func TestRefuseRaisesTheKind(t *testing.T) {
	var ae *temporal.ApplicationError
	rejected := entry.Refuse(fmt.Errorf("send: %w", entry.ErrRejected))
	if !errors.As(rejected, &ae) || ae.Type() != entry.ErrTypeTelegramRejected || !ae.NonRetryable() {
		t.Fatalf("rejected: %#v", rejected)
	}
	limited := entry.Refuse(&entry.RetryAfterError{After: 4 * time.Second, Description: "Too Many Requests"})
	if !errors.As(limited, &ae) || ae.Type() != entry.ErrTypeTelegramRateLimited || ae.NonRetryable() || ae.NextRetryDelay() != 4*time.Second {
		t.Fatalf("rate limited: %#v", limited)
	}
	worded := entry.RefuseAs(entry.ErrRejected, "the reply text is blank")
	if !errors.As(worded, &ae) || ae.Type() != entry.ErrTypeTelegramRejected || ae.Message() != "the reply text is blank" {
		t.Fatalf("worded: %#v", worded)
	}
	other := errors.New("telegram: 502")
	if got := entry.Refuse(other); got != other {
		t.Fatalf("Refuse(%v) = %v, want it unchanged", other, got)
	}
}

// TestEveryDeclaredRefusalHasARow: each error type and sentinel refusals.go declares is a row of
// entry.Refusals (a kind without its row would be answered as an internal error).
func TestEveryDeclaredRefusalHasARow(t *testing.T) {
	refusaltest.EveryDeclaredKindHasARow(t, entry.Refusals, "refusals.go")
}
