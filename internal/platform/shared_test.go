package platform

import (
	"errors"
	"testing"
)

func TestSharedBuildsOnceAndRetriesFailures(t *testing.T) {
	p := &Platform{}
	builds := 0
	fail := true
	build := func() (any, error) {
		builds++
		if fail {
			return nil, errors.New("down")
		}
		return builds, nil
	}
	if _, err := p.Shared("k", build); err == nil {
		t.Fatal("a failed build must return its error")
	}
	fail = false
	first, err := p.Shared("k", build)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := p.Shared("k", build)
	if first != second || builds != 2 {
		t.Fatalf("got %v then %v after %d builds; want one cached value after the retry", first, second, builds)
	}
}
