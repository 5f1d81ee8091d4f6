package pipeline

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// A fresh entry is served from memory; concurrent callers are safe (run with -race).
func TestProviderCacheReusesFreshEntries(t *testing.T) {
	var c providerCache[*pipeline.Provider]
	var loads atomic.Int32
	load := func(_ context.Context, ref string) (*pipeline.Provider, error) {
		loads.Add(1)
		return &pipeline.Provider{Ref: ref}, nil
	}
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 10 {
				if p, _, err := c.get(context.Background(), "a", load); err != nil || p.Ref != "a" {
					t.Errorf("get: %+v %v", p, err)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	if n := loads.Load(); n < 1 || n > 8 {
		t.Fatalf("%d loads for 80 gets of one fresh provider", n)
	}
}
