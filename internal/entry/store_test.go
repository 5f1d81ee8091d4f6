package entry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestClaimIsOneDocumentPerKey(t *testing.T) {
	s := entry.NewStore(testenv.Mongo(t))
	ctx := context.Background()
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	key := "http:wf:1:1700000000"
	var wg sync.WaitGroup
	created := make(chan bool, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, c, err := s.Claim(ctx, &entry.Run{TaskID: entry.TaskID(key), IdempotencyKey: key, Status: entry.StatusPending})
			if err != nil || run.TaskID != entry.TaskID(key) {
				t.Errorf("claim: %v %+v", err, run)
			}
			created <- c
		}()
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d claims created the document", n)
	}

	id := entry.TaskID(key)
	at := time.Now().UTC()
	for _, u := range []entry.StatusUpdate{
		{TaskID: id, Seq: 2, Status: entry.StatusSuspended, Reason: "retries exhausted", Attempts: 2, At: at},
		{TaskID: id, Seq: 1, Status: entry.StatusProcessing, Attempts: 1, At: at}, // late, must not win
	} {
		if err := s.Record(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	run, err := s.Get(ctx, id)
	if err != nil || run.Status != entry.StatusSuspended || run.SuspendedReason == "" || run.Attempts != 2 {
		t.Fatalf("after records: %+v %v", run, err)
	}
	if err := s.Unclaim(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); err != nil {
		t.Fatal("unclaim removed a task that had started")
	}
	if ok, err := s.MarkReplied(ctx, id, 5); !ok || err != nil {
		t.Fatalf("first reply: %v %v", ok, err)
	}
	if ok, _ := s.MarkReplied(ctx, id, 6); ok {
		t.Fatal("a second reply was recorded")
	}
}
