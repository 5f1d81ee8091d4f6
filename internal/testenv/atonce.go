package testenv

import (
	"sync"
	"testing"
)

// AtOnce runs fn(0) … fn(n-1) on n goroutines released together, waits for all of them and
// fails the test with the errors they returned: a burst of concurrent callers, for tests of what
// concurrency shares or must not share.
func AtOnce(t testing.TB, n int, fn func(i int) error) {
	t.Helper()
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs <- fn(i)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	failed := false
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent call: %v", err)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}
