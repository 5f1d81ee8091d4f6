package entrydb_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Accept is what the workflow's first activity runs, retried by Temporal and possibly racing a
// timed-out attempt of itself: any number of concurrent calls leave one document, exactly one of
// them inserts it, and the others get it back untouched.
func TestAcceptIsOneDocumentPerKey(t *testing.T) {
	db := testenv.Mongo(t)
	s := entrydb.New(db)
	ctx := context.Background()
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	key := "http:wf:1:1700000000"
	newRun := func() *entry.Run {
		return &entry.Run{TaskID: entry.TaskID(key), IdempotencyKey: key, Status: entry.StatusPending, Retry: entry.Retry{Max: 2}}
	}
	var (
		wg       sync.WaitGroup
		inserted atomic.Int32
	)
	for range 8 {
		wg.Go(func() {
			prev, err := s.Accept(ctx, newRun())
			switch {
			case err != nil:
				t.Errorf("accept: %v", err)
			case prev == nil:
				inserted.Add(1)
			case !prev.Unstarted():
				t.Errorf("a concurrent accept sees a started task: %+v", prev)
			}
		})
	}
	wg.Wait()
	if n := inserted.Load(); n != 1 {
		t.Errorf("%d accepts inserted, want 1", n)
	}
	n, err := db.Collection(entrydb.CollRuns).CountDocuments(ctx, bson.D{{Key: "idempotency_key", Value: key}})
	if err != nil || n != 1 {
		t.Fatalf("documents for the key: %d %v", n, err)
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
	// A late retry of the first activity, or the first activity of a later execution of the same
	// task id: the document is left as it is and returned, so the caller can tell it has run.
	if prev, err := s.Accept(ctx, newRun()); err != nil || prev == nil || prev.Unstarted() || prev.Status != entry.StatusSuspended {
		t.Fatalf("a late accept: %+v %v", prev, err)
	}
	if run, err := s.Get(ctx, id); err != nil || run.Status != entry.StatusSuspended || run.Seq != 2 {
		t.Fatalf("a late accept changed the task: %+v %v", run, err)
	}
}

// A reply's parts are recorded once each and in order: the write for part i applies only over
// the progress of part i-1, so a repeated or out-of-order write changes nothing. A failure
// keeps the parts that went out.
func TestReplyPartsAreRecordedOnceInOrder(t *testing.T) {
	db := testenv.Mongo(t)
	s := entrydb.New(db)
	ctx := context.Background()
	id := entry.TaskID("telegram:wf:42:7")
	if _, err := s.Accept(ctx, &entry.Run{TaskID: id, IdempotencyKey: "telegram:wf:42:7", Status: entry.StatusPending}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	first := entry.Reply{Parts: 3}.WithPart(501, at)
	second := first.WithPart(502, at)
	for _, c := range []struct {
		name string
		r    entry.Reply
		want bool
	}{
		{"second before first", second, false},
		{"first", first, true},
		{"first again", first, false},
		{"second", second, true},
		{"second again", second, false},
	} {
		if ok, err := s.RecordReplyPart(ctx, id, c.r); err != nil || ok != c.want {
			t.Fatalf("%s: %v %v, want %v", c.name, ok, err, c.want)
		}
	}
	run, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r := run.Reply; r == nil || r.Status != entry.ReplySending || r.Sent != 2 || r.Parts != 3 || len(r.MessageIDs) != 2 || r.MessageIDs[1] != 502 || run.ReplyMessageID != 501 {
		t.Fatalf("after two parts: %+v (first message %d)", run.Reply, run.ReplyMessageID)
	}
	fail := entry.ReplyFailure{TaskID: id, Error: "HTTP 403: Forbidden: bot was blocked by the user", At: at}
	for range 2 {
		if err := s.RecordReplyFailure(ctx, fail); err != nil {
			t.Fatal(err)
		}
	}
	run, _ = s.Get(ctx, id)
	if r := run.ReplyRecord(); r.Status != entry.ReplyFailed || r.Error != fail.Error || r.Sent != 2 || !r.At.Equal(at) {
		t.Fatalf("after the failure: %+v", r)
	}
	if st := entry.StatusOf(run); st.Reply == nil || st.Reply.Status != entry.ReplyFailed {
		t.Fatalf("status: %+v", st)
	}
}
