package entry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// fakeActs are the entry activities with the workflow_runs writes kept in memory.
type fakeActs struct {
	accepted []entry.TaskEnvelope
	// earlier is what the store holds for the task id before this execution (nil: nothing).
	earlier  *entry.TaskStatus
	records  []entry.StatusUpdate
	prepErr  error
	replies  []entry.ReplyRequest
	replyErr []error
	// sent is what the reply activity reports once it succeeds.
	sent     *entry.Reply
	failures []entry.ReplyFailure
	// replyAttr is the TaskloomReply search attribute the workflow set ("" when none).
	replyAttr string
	// statusAttrs are the TaskloomStatus values the workflow upserted, in order.
	statusAttrs []string
	// startDown fails that many EntryStartRun attempts as an unreachable MongoDB does.
	startDown int
}

// startRun is EntryStartRun: the accept and the first attempt's processing in one write.
func (f *fakeActs) startRun(_ context.Context, req entry.StartRequest) (*entry.TaskStatus, error) {
	if f.startDown > 0 {
		f.startDown--
		return nil, errors.New("server selection error: connection refused")
	}
	f.accepted = append(f.accepted, req.Envelope)
	if f.earlier != nil {
		return f.earlier, nil
	}
	f.records = append(f.records, req.First)
	return nil, nil
}

// pipelineUnknownWhilePrepErr makes the child pipeline refuse the task as its admission does for
// an unknown pipeline while f.prepErr is set, and succeed once it is cleared.
func (f *fakeActs) pipelineUnknownWhilePrepErr(env *testsuite.TestWorkflowEnvironment) {
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		func(workflow.Context, pipelinewf.Input) (*pipelinewf.Result, error) {
			if f.prepErr != nil {
				return nil, temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)
			}
			return &pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "ok"}}}, nil
		})
}

// record refuses a status write before the task was accepted: in workflow_runs it would update
// no document.
func (f *fakeActs) record(_ context.Context, u entry.StatusUpdate) error {
	if len(f.accepted) == 0 {
		return temporal.NewNonRetryableApplicationError("status "+u.Status+" recorded before the task was accepted", "Test", nil)
	}
	f.records = append(f.records, u)
	return nil
}

func (f *fakeActs) reply(_ context.Context, r entry.ReplyRequest) (*entry.Reply, error) {
	f.replies = append(f.replies, r)
	if len(f.replyErr) > 0 {
		err := f.replyErr[0]
		if len(f.replyErr) > 1 {
			f.replyErr = f.replyErr[1:] // the last error repeats
		}
		if err != nil {
			return nil, err
		}
	}
	if f.sent != nil {
		return f.sent, nil
	}
	return &entry.Reply{Status: entry.ReplySent, Parts: 1, Sent: 1, MessageIDs: []int64{1}}, nil
}

func (f *fakeActs) replyFailed(_ context.Context, rf entry.ReplyFailure) error {
	f.failures = append(f.failures, rf)
	return nil
}

func (f *fakeActs) statuses() []string {
	out := make([]string, len(f.records))
	for i, r := range f.records {
		out[i] = r.Status
	}
	return out
}

func newEnv(t *testing.T, f *fakeActs) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *entryact.Activities // mocked below: never called
	Register(env, a)
	env.RegisterWorkflow(pipelinewf.PipelineWorkflow)
	env.OnActivity(a.EntryStartRun, mock.Anything, mock.Anything).Return(f.startRun)
	env.OnActivity(a.EntryRecordStatus, mock.Anything, mock.Anything).Return(f.record)
	env.OnActivity(a.EntrySendReply, mock.Anything, mock.Anything).Return(f.reply)
	env.OnActivity(a.EntryRecordReplyFailure, mock.Anything, mock.Anything).Return(f.replyFailed)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(searchattr.Reply); ok {
			f.replyAttr = v
		}
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(searchattr.Status); ok {
			f.statusAttrs = append(f.statusAttrs, v)
		}
	}).Return(nil).Maybe()
	return env
}

func input(channel string, retryMax int) entry.WorkflowInput {
	text, history := "hello", []string{"before"}
	req := &entry.ApplyRequest{WorkflowID: "echo", UserText: &text, HistoryChunks: &history,
		CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": "42", "message_id": 9.0}}, RetryMax: &retryMax}
	env := req.Envelope(entry.Defaults{Channel: channel, Source: "test", Now: time.Unix(1700000000, 0), Window: time.Second})
	return entry.WorkflowInput{Envelope: env, UserID: "u", FeatureID: "f", RetryDelays: []time.Duration{time.Minute, 2 * time.Minute},
		Reply: channel == entry.ChannelTelegram, ReplyField: "text"}
}

func TestCompletesWithThePipelinesFinalOutput(t *testing.T) {
	f := &fakeActs{}
	env := newEnv(t, f)
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		&pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"x": 1.0}, {"text": "hi back"}}}, nil)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelTelegram, 2))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusCompleted || st.Result["text"] != "hi back" || st.Attempts != 1 {
		t.Fatalf("status: %+v", st)
	}
	if got := f.statuses(); len(got) != 2 || got[0] != entry.StatusProcessing || got[1] != entry.StatusCompleted {
		t.Fatalf("records: %v", got)
	}
	if len(f.replies) != 1 || f.replies[0].Text != "hi back" || f.replies[0].ChatID != "42" || f.replies[0].ReplyTo != 9 {
		t.Fatalf("replies: %+v", f.replies)
	}
}

// The straight path costs what docs/entry.md lists: one write before the pipeline (the task
// and its first attempt as processing), one after (completed), no side effect, no pipeline
// lookup of its own and no TaskloomStatus upsert; the child's id is a function of the execution.
func TestStraightPathIsOneWriteBeforeAndOneAfter(t *testing.T) {
	f := &fakeActs{}
	env := newEnv(t, f)
	var child pipelinewf.Input
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in pipelinewf.Input) (*pipelinewf.Result, error) {
			child = in
			return &pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "ok"}}}, nil
		})
	in := input(entry.ChannelHTTP, 1)
	started := env.Now()
	env.ExecuteWorkflow(EntryTaskWorkflow, in)
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if got := f.statuses(); len(got) != 2 || got[0] != entry.StatusProcessing || got[1] != entry.StatusCompleted ||
		f.records[0].Seq != 1 || f.records[0].Attempts != 1 || f.records[1].Seq != 2 {
		t.Fatalf("records: %+v", f.records)
	}
	if len(f.accepted) != 1 || len(f.statusAttrs) != 0 {
		t.Fatalf("accepted %d times, TaskloomStatus upserts %v", len(f.accepted), f.statusAttrs)
	}
	want := entry.PipelineTaskID(in.Envelope.TaskID, "default-test-run-id", started, 1) // the test environment's run id
	if child.TaskID != want || st.PipelineTaskID != want || f.records[0].PipelineTaskID != want || !pipeline.ValidTaskID(want) {
		t.Fatalf("pipeline task id: child %q, status %q, record %q, want %q", child.TaskID, st.PipelineTaskID, f.records[0].PipelineTaskID, want)
	}
	if child.Pipeline != in.Envelope.Payload.WorkflowID || child.Version != in.Envelope.Payload.WorkflowVersion {
		t.Fatalf("child input: %+v", child)
	}
}

// With MongoDB down when the task starts, EntryStartRun is retried until it answers; nothing
// runs before the task is recorded, and then it runs once.
func TestStartRunWaitsForMongo(t *testing.T) {
	f := &fakeActs{startDown: 3}
	env := newEnv(t, f)
	children := 0
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		func(workflow.Context, pipelinewf.Input) (*pipelinewf.Result, error) {
			children++
			return &pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "ok"}}}, nil
		})
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelHTTP, 1))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusCompleted || children != 1 || len(f.accepted) != 1 || strings.Join(f.statuses(), ",") != "processing,completed" {
		t.Fatalf("status %s, %d pipelines, accepted %d, records %v", st.Status, children, len(f.accepted), f.statuses())
	}
}

// A task that leaves the straight path shows every status from then on in TaskloomStatus, so
// the ops listings find it; its processing before the first failure is not upserted.
func TestOffTheStraightPathEveryStatusIsUpserted(t *testing.T) {
	f := &fakeActs{prepErr: temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)}
	env := newEnv(t, f)
	f.pipelineUnknownWhilePrepErr(env)
	env.RegisterDelayedCallback(func() {
		f.prepErr = nil
		env.SignalWorkflow(entry.SignalResume, nil)
	}, time.Hour)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelHTTP, 3))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	want := []string{entry.StatusSuspended, entry.StatusProcessing, entry.StatusCompleted}
	if st.Status != entry.StatusCompleted || strings.Join(f.statusAttrs, ",") != strings.Join(want, ",") {
		t.Fatalf("status %s, TaskloomStatus upserts %v, want %v", st.Status, f.statusAttrs, want)
	}
}

// The workflow records its own task (the intake writes nothing), once, before any
// status change.
func TestAcceptsItsOwnTaskFirst(t *testing.T) {
	f := &fakeActs{}
	env := newEnv(t, f)
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		&pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "ok"}}}, nil)
	in := input(entry.ChannelHTTP, 1)
	env.ExecuteWorkflow(EntryTaskWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(f.accepted) != 1 || f.accepted[0].TaskID != in.Envelope.TaskID || f.accepted[0].Context.IdempotencyKey != in.Envelope.Context.IdempotencyKey {
		t.Fatalf("accepted: %+v", f.accepted)
	}
}

// A task id whose workflow_runs document records a finished run (an earlier execution that
// Temporal's retention has forgotten, so the start was not refused) is not run again: the
// execution ends with the recorded status, writes no status and starts no pipeline.
func TestATaskThatAlreadyRanIsNotRunAgain(t *testing.T) {
	f := &fakeActs{earlier: &entry.TaskStatus{Status: entry.StatusCompleted, Result: map[string]any{"text": "first"}, Attempts: 1}}
	env := newEnv(t, f)
	pipelines := 0
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		func(workflow.Context, pipelinewf.Input) (*pipelinewf.Result, error) {
			pipelines++
			return &pipelinewf.Result{Status: "success"}, nil
		})
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelHTTP, 1))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusCompleted || st.Result["text"] != "first" {
		t.Fatalf("status: %+v", st)
	}
	if pipelines != 0 || len(f.records) != 0 || len(f.replies) != 0 {
		t.Fatalf("ran again: %d pipelines, records %v, replies %d", pipelines, f.statuses(), len(f.replies))
	}
}

func TestRetriesOnTheChannelCurveThenSuspendsAndResumes(t *testing.T) {
	f := &fakeActs{}
	env := newEnv(t, f)
	calls := 0
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, _ pipelinewf.Input) (*pipelinewf.Result, error) {
			calls++
			if calls <= 3 {
				return nil, temporal.NewNonRetryableApplicationError("vendor down", pipelinewf.ErrTypeStepFailed, nil)
			}
			return &pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "ok"}}}, nil
		})
	start := env.Now()
	var suspendedAt time.Time
	env.RegisterDelayedCallback(func() {
		var st entry.TaskStatus
		v, err := env.QueryWorkflow(entry.QueryStatus)
		if err != nil || v.Get(&st) != nil {
			t.Errorf("query: %v", err)
			return
		}
		if st.Status != entry.StatusSuspended || st.Retry.Count != 2 || st.Attempts != 3 {
			t.Errorf("before resume: %+v", st)
		}
		suspendedAt = env.Now()
		env.SignalWorkflow(entry.SignalResume, nil)
	}, time.Hour)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelHTTP, 2))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusCompleted || st.Attempts != 4 || st.Retry.Count != 0 {
		t.Fatalf("final: %+v", st)
	}
	// Two retries waited 1m and 2m on durable timers before the suspension.
	var retrying []entry.StatusUpdate
	for _, r := range f.records {
		if r.Status == entry.StatusRetrying {
			retrying = append(retrying, r)
		}
	}
	if len(retrying) != 2 || retrying[0].Retry.NextAttemptAt.Sub(start) < time.Minute || suspendedAt.IsZero() {
		t.Fatalf("retry records: %+v", retrying)
	}
	want := []string{"processing", "retrying", "processing", "retrying", "processing", "suspended", "processing", "completed"}
	if got := f.statuses(); len(got) != len(want) {
		t.Fatalf("records: %v, want %v", got, want)
	}
	for i, s := range want {
		if f.records[i].Status != s || f.records[i].Seq != i+1 {
			t.Fatalf("record %d: %+v, want %s seq %d", i, f.records[i], s, i+1)
		}
	}
}

func TestUnknownPipelineSuspendsAtOnceAndDropEndsIt(t *testing.T) {
	f := &fakeActs{prepErr: temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)}
	env := newEnv(t, f)
	f.pipelineUnknownWhilePrepErr(env)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(entry.SignalDrop, entry.SignalPayload{Operator: "ops", Reason: "obsolete"})
	}, time.Minute)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelHTTP, 3))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	got := f.statuses()
	if st.Status != entry.StatusDropped || st.Attempts != 1 || len(got) != 3 || got[1] != entry.StatusSuspended {
		t.Fatalf("status %+v, records %v", st, got)
	}
	if r := f.records[1]; r.Reason == "" || r.Retry.Count != 0 {
		t.Fatalf("suspension record: %+v", r)
	}
}

func TestDropDuringARetryWait(t *testing.T) {
	f := &fakeActs{}
	env := newEnv(t, f)
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(nil, errors.New("boom"))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(entry.SignalDrop, nil) }, 10*time.Second)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelTelegram, 3))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusDropped || st.Attempts != 1 || len(f.replies) != 0 {
		t.Fatalf("status: %+v replies %v", st, f.replies)
	}
}

func TestTelegramRateLimitIsRetriedAfterRetryAfter(t *testing.T) {
	f := &fakeActs{replyErr: []error{temporal.NewApplicationErrorWithOptions("429", "EntryTelegramRateLimited",
		temporal.ApplicationErrorOptions{NextRetryDelay: 7 * time.Second}), nil}}
	env := newEnv(t, f)
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		&pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "yo"}}}, nil)
	start := env.Now()
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelTelegram, 0))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(f.replies) != 2 || env.Now().Sub(start) < 7*time.Second {
		t.Fatalf("replies %d after %s", len(f.replies), env.Now().Sub(start))
	}
}

// completeTelegram runs a Telegram task whose pipeline answers text, to its end.
func completeTelegram(t *testing.T, f *fakeActs) entry.TaskStatus {
	t.Helper()
	env := newEnv(t, f)
	env.OnWorkflow(pipelinewf.PipelineWorkflow, mock.Anything, mock.Anything).Return(
		&pipelinewf.Result{Status: "success", Outputs: []map[string]any{{"text": "a long answer"}}}, nil)
	env.ExecuteWorkflow(EntryTaskWorkflow, input(entry.ChannelTelegram, 0))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// A reply that went out shows on the task as sent, with its parts; nothing else is recorded.
func TestSentReplyShowsItsParts(t *testing.T) {
	f := &fakeActs{sent: &entry.Reply{Status: entry.ReplySent, Parts: 2, Sent: 2, MessageIDs: []int64{5, 6}}}
	st := completeTelegram(t, f)
	if st.Status != entry.StatusCompleted || st.Reply == nil || st.Reply.Status != entry.ReplySent || st.Reply.Parts != 2 {
		t.Fatalf("status: %+v reply %+v", st, st.Reply)
	}
	if len(f.replies) != 1 || len(f.failures) != 0 || f.replyAttr != "" {
		t.Fatalf("replies %d, failures %v, TaskloomReply %q", len(f.replies), f.failures, f.replyAttr)
	}
}

// A reply Telegram refuses (403 bot blocked) is tried once, the task still completes, and the
// refusal is recorded: in workflow_runs, on the status and as TaskloomReply=failed.
func TestRefusedReplyIsRecordedAndNotRetried(t *testing.T) {
	refused := temporal.NewNonRetryableApplicationError("sendMessage to chat 42: HTTP 403: Forbidden: bot was blocked by the user",
		entry.ErrTypeTelegramRejected, nil)
	f := &fakeActs{replyErr: []error{refused}}
	st := completeTelegram(t, f)
	if st.Status != entry.StatusCompleted || st.LastError != "" {
		t.Fatalf("status: %+v", st)
	}
	if len(f.replies) != 1 {
		t.Fatalf("a refused reply was tried %d times", len(f.replies))
	}
	if len(f.failures) != 1 || !strings.Contains(f.failures[0].Error, "bot was blocked by the user") || f.failures[0].At.IsZero() {
		t.Fatalf("recorded failures: %+v", f.failures)
	}
	if st.Reply == nil || st.Reply.Status != entry.ReplyFailed || st.Reply.Error != f.failures[0].Error || f.replyAttr != entry.ReplyFailed {
		t.Fatalf("reply %+v, TaskloomReply %q", st.Reply, f.replyAttr)
	}
}

// A reply that keeps failing with retryable errors (Telegram 5xx) is retried until its time
// budget is used up, then recorded as failed: not retried forever.
func TestReplyFailingUntilItsBudgetEndsIsRecorded(t *testing.T) {
	f := &fakeActs{replyErr: []error{errors.New("sendMessage to chat 42: HTTP 502: Bad Gateway")}}
	st := completeTelegram(t, f)
	if len(f.replies) < 5 || len(f.failures) != 1 || st.Reply == nil || st.Reply.Status != entry.ReplyFailed {
		t.Fatalf("%d attempts, failures %+v, reply %+v", len(f.replies), f.failures, st.Reply)
	}
	t.Logf("%d attempts, then %q", len(f.replies), st.Reply.Error)
}

func withDropAfter(in entry.WorkflowInput, d time.Duration) entry.WorkflowInput {
	in.SuspendedDropAfter = &d
	return in
}

func TestSuspendedTaskNotResumedIsAutoDropped(t *testing.T) {
	f := &fakeActs{prepErr: temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)}
	env := newEnv(t, f)
	f.pipelineUnknownWhilePrepErr(env)
	start := env.Now()
	env.ExecuteWorkflow(EntryTaskWorkflow, withDropAfter(input(entry.ChannelHTTP, 3), 24*time.Hour))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusDropped || !st.AutoDropped || !strings.HasPrefix(st.DropReason, entry.AutoDropReason) {
		t.Fatalf("status %+v", st)
	}
	last := f.records[len(f.records)-1]
	if last.Status != entry.StatusDropped || !last.AutoDropped || last.Reason != st.DropReason || last.At.Sub(start) < 24*time.Hour {
		t.Fatalf("drop record %+v (started %s)", last, start)
	}
}

func TestResumeBeforeTheAutoDropCancelsIt(t *testing.T) {
	f := &fakeActs{prepErr: temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)}
	env := newEnv(t, f)
	f.pipelineUnknownWhilePrepErr(env)
	env.RegisterDelayedCallback(func() {
		f.prepErr = nil // the operator fixed the pipeline
		env.SignalWorkflow(entry.SignalResume, nil)
	}, time.Hour)
	env.ExecuteWorkflow(EntryTaskWorkflow, withDropAfter(input(entry.ChannelHTTP, 3), 24*time.Hour))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusCompleted || st.AutoDropped {
		t.Fatalf("status %+v, records %v", st, f.statuses())
	}
}

func TestZeroDropAfterKeepsWaiting(t *testing.T) {
	f := &fakeActs{prepErr: temporal.NewNonRetryableApplicationError("pipeline gone", pipeline.ErrTypeUnknownPipeline, nil)}
	env := newEnv(t, f)
	f.pipelineUnknownWhilePrepErr(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(entry.SignalDrop, nil) }, 48*time.Hour)
	env.ExecuteWorkflow(EntryTaskWorkflow, withDropAfter(input(entry.ChannelHTTP, 3), 0))
	var st entry.TaskStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != entry.StatusDropped || st.AutoDropped {
		t.Fatalf("status %+v", st)
	}
}
