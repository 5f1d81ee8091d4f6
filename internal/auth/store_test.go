package auth

import (
	"context"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestEnsureIndexesTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := NewStore(testenv.Mongo(t))
	for i := 0; i < 2; i++ {
		if err := s.EnsureIndexes(ctx); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}
