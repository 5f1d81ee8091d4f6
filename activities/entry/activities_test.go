package entry_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// storeFixture is the activities over the embedded database's workflow_runs store.
type storeFixture struct {
	runs *entrydb.Store
	acts *entryact.Activities
}

func newStoreFixture(t *testing.T) *storeFixture {
	t.Helper()
	db := testenv.Mongo(t)
	f := &storeFixture{runs: entrydb.New(db)}
	f.acts = &entryact.Activities{Runs: f.runs, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return f
}

// run executes one attempt of the activity fn with args, as Temporal does, and decodes its result
// into out (when not nil; a nil result leaves out as it is).
func (f *storeFixture) run(t *testing.T, out any, fn any, args ...any) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(f.acts)
	v, err := env.ExecuteActivity(fn, args...)
	if err != nil || out == nil || !v.HasValue() { // a nil result decodes to no value
		return err
	}
	return v.Get(out)
}

// envelope is an http task keyed by key, for pipeline name.
func envelope(key, name string) entry.TaskEnvelope {
	return entry.TaskEnvelope{TaskID: entry.TaskID(key), Type: entry.TaskType, Retry: entry.Retry{Max: 2},
		Payload: entry.Payload{WorkflowID: name, UserText: "hi", HistoryChunks: []string{}, Source: "test",
			CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": "c1"}},
			Telemetry:    entry.Telemetry{Channel: entry.ChannelHTTP}},
		Context: entry.Context{IdempotencyKey: key}}
}

// EntryStartRun records the task and its first attempt in one write, and is safe at every point
// a worker can die: a retry after the write finds its own document and runs the task (no second
// write), the next status write applies over it, a document an older intake wrote without
// starting the task gets the first status, and a task that has run is not run again.
func TestStartRunRecordsTaskAndFirstAttemptOnce(t *testing.T) {
	f := newStoreFixture(t)
	ctx := context.Background()
	env := envelope(testenv.Unique("http:wf:c1:"), "wf")
	first := entry.StatusUpdate{TaskID: env.TaskID, Seq: 1, Status: entry.StatusProcessing, Attempts: 1, Retry: env.Retry,
		PipelineTaskID: entry.PipelineTaskID(env.TaskID, "run-1", time.Now(), 1), At: time.Now()}
	req := entry.StartRequest{Envelope: env, First: first}
	for attempt := range 2 { // the second attempt: the worker died after the write, before reporting it
		var st *entry.TaskStatus
		if err := f.run(t, &st, f.acts.EntryStartRun, req); err != nil || st != nil {
			t.Fatalf("start attempt %d: %+v %v, want nil (run the task)", attempt+1, st, err)
		}
	}
	run, err := f.runs.Get(ctx, env.TaskID)
	if err != nil || run.Status != entry.StatusProcessing || run.Seq != 1 || run.Attempts != 1 || run.PipelineTaskID != first.PipelineTaskID ||
		run.IdempotencyKey != env.Context.IdempotencyKey || run.WorkflowID != "wf" || run.ChatID != "c1" || run.Retry.Max != 2 {
		t.Fatalf("recorded: %+v %v", run, err)
	}
	done := entry.StatusUpdate{TaskID: env.TaskID, Seq: 2, Status: entry.StatusCompleted, Attempts: 1, PipelineTaskID: first.PipelineTaskID,
		Result: map[string]any{"text": "hello"}, At: time.Now()}
	if err := f.run(t, nil, f.acts.EntryRecordStatus, done); err != nil {
		t.Fatal(err)
	}
	if run, err := f.runs.Get(ctx, env.TaskID); err != nil || run.Status != entry.StatusCompleted || run.Seq != 2 {
		t.Fatalf("after completion: %+v %v", run, err)
	}
	// A new execution of the same task id (Temporal forgot the first): its own first attempt
	// differs, so the document is a task that ran.
	again := req
	again.First.PipelineTaskID = entry.PipelineTaskID(env.TaskID, "run-2", time.Now(), 1)
	var st *entry.TaskStatus
	if err := f.run(t, &st, f.acts.EntryStartRun, again); err != nil || st == nil || st.Status != entry.StatusCompleted || st.Result["text"] != "hello" {
		t.Fatalf("start of a task that has run: %+v %v", st, err)
	}

	old := envelope(testenv.Unique("http:wf:c1:"), "wf")
	if _, err := f.runs.Accept(ctx, entry.NewRun(old)); err != nil { // an older intake's record
		t.Fatal(err)
	}
	first.TaskID, st = old.TaskID, nil
	if err := f.run(t, &st, f.acts.EntryStartRun, entry.StartRequest{Envelope: old, First: first}); err != nil || st != nil {
		t.Fatalf("start over an unstarted record: %+v %v", st, err)
	}
	if run, err := f.runs.Get(ctx, old.TaskID); err != nil || run.Status != entry.StatusProcessing || run.Seq != 1 {
		t.Fatalf("unstarted record after the start: %+v %v", run, err)
	}
}

// EntryRecordStatus applies a status change only over an older one: a retried or late write
// changes nothing, and a suspension records its reason and time.
func TestRecordStatusKeepsTheNewest(t *testing.T) {
	f := newStoreFixture(t)
	ctx := context.Background()
	env := envelope(testenv.Unique("http:wf:c1:"), "wf")
	if _, err := f.runs.Accept(ctx, entry.NewRun(env)); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	for _, u := range []entry.StatusUpdate{
		{TaskID: env.TaskID, Seq: 1, Status: entry.StatusProcessing, Attempts: 1, At: at},
		{TaskID: env.TaskID, Seq: 3, Status: entry.StatusSuspended, Attempts: 3, Reason: "retries exhausted", LastError: "vendor down", At: at},
		{TaskID: env.TaskID, Seq: 2, Status: entry.StatusRetrying, Attempts: 2, At: at}, // late: must not win
		{TaskID: env.TaskID, Seq: 3, Status: entry.StatusSuspended, Attempts: 3, Reason: "retries exhausted", LastError: "vendor down", At: at},
	} {
		if err := f.run(t, nil, f.acts.EntryRecordStatus, u); err != nil {
			t.Fatalf("record seq %d: %v", u.Seq, err)
		}
	}
	run, err := f.runs.Get(ctx, env.TaskID)
	if err != nil || run.Status != entry.StatusSuspended || run.Seq != 3 || run.Attempts != 3 || run.SuspendedReason != "retries exhausted" ||
		run.LastError != "vendor down" || run.SuspendedAt == nil || !run.SuspendedAt.Equal(at) {
		t.Fatalf("after the records: %+v %v", run, err)
	}
}

// EntryRecordReplyFailure records a reply given up on the task, and the same failure recorded
// twice (an activity retry) leaves the same document.
func TestRecordReplyFailureIsIdempotent(t *testing.T) {
	f := newStoreFixture(t)
	ctx := context.Background()
	env := envelope(testenv.Unique("telegram:wf:c1:"), "wf")
	if _, err := f.runs.Accept(ctx, entry.NewRun(env)); err != nil {
		t.Fatal(err)
	}
	fail := entry.ReplyFailure{TaskID: env.TaskID, Error: "HTTP 400: Bad Request: chat not found", At: time.Now().UTC().Truncate(time.Millisecond)}
	for range 2 {
		if err := f.run(t, nil, f.acts.EntryRecordReplyFailure, fail); err != nil {
			t.Fatal(err)
		}
	}
	run, err := f.runs.Get(ctx, env.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if r := run.ReplyRecord(); r == nil || r.Status != entry.ReplyFailed || r.Error != fail.Error || !r.At.Equal(fail.At) || r.Sent != 0 {
		t.Fatalf("reply after the failure: %+v", r)
	}
}
