package joinread

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sync/singleflight"
)

// A caller that gives up stops waiting with its own context's error, and the read it started runs
// on uncancelled, so the callers that joined it get its answer.
func TestACallerGivingUpDoesNotCancelTheSharedRead(t *testing.T) {
	var g singleflight.Group
	started, release := make(chan struct{}), make(chan struct{})
	readErr := make(chan error, 1)
	read := func(ctx context.Context) (string, error) {
		close(started)
		<-release
		readErr <- ctx.Err()
		return "v", ctx.Err()
	}
	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := Do(&g, first, "k", read)
		firstErr <- err
	}()
	<-started
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v; want context.Canceled", err)
	}
	close(release)
	if err := <-readErr; err != nil {
		t.Fatalf("the shared read's context ended with its first caller: %v", err)
	}
	// The flight is over: a caller now reads afresh and gets the answer.
	if v, err := Do(&g, context.Background(), "k", func(context.Context) (string, error) { return "w", nil }); err != nil || v != "w" {
		t.Fatalf("a later read: %q, %v", v, err)
	}
}
