package taskecho

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentAppendsGetConsecutiveIDs: appends are one atomic update each, so 30 at once into
// one task all land, with the ids 0..29 each handed out once.
func TestConcurrentAppendsGetConsecutiveIDs(t *testing.T) {
	f := newFixture(t)
	if _, err := f.submit("p", "q", map[string]any{"id": "a", "name": "a", "prompt": "a", "status": "pending"}); err != nil {
		t.Fatal(err)
	}
	const n = 30
	ids := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.svc.AppendMessage(f.ctx, &IncrementalInput{ProjectID: "p", QueueID: "q", TaskID: "a", Role: "USER", Content: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids <- r.Index
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int]bool{}
	for id := range ids {
		seen[id] = true
	}
	for i := range n {
		if !seen[i] {
			t.Fatalf("ids %v: missing %d", seen, i)
		}
	}
	task, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "p", QueueID: strp("q"), TaskID: "a"}, false)
	if err != nil || len(task.Messages) != n || task.MessageSeq != n {
		t.Fatalf("stored %d messages, seq %d, err %v", len(task.Messages), task.MessageSeq, err)
	}
}

func strp(s string) *string { return &s }
