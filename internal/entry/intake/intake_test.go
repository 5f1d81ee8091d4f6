package intake_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// workflows is a Temporal stand-in behind intake.Workflows: it remembers what was started and
// signalled, and answers Describe and QueryStatus as told.
type workflows struct {
	mu       sync.Mutex // Start may be called concurrently
	started  map[string]entry.WorkflowInput
	running  map[string]*entry.TaskStatus // answered by QueryStatus
	closed   map[string]string
	signals  []string
	startErr error
}

func newWorkflows() *workflows {
	return &workflows{started: map[string]entry.WorkflowInput{}, running: map[string]*entry.TaskStatus{}, closed: map[string]string{}}
}

func (w *workflows) Start(_ context.Context, in entry.WorkflowInput) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.startErr != nil {
		return false, w.startErr
	}
	if _, ok := w.started[in.Envelope.TaskID]; ok {
		return false, nil
	}
	w.started[in.Envelope.TaskID] = in
	return true, nil
}

func (w *workflows) Describe(_ context.Context, id string) (bool, string, error) {
	_, running := w.running[id]
	return running, w.closed[id], nil
}

// Closure: the fake's closed executions were ended from outside by nobody in particular.
func (w *workflows) Closure(_ context.Context, id string) (*closure.Closure, error) {
	if how := w.closed[id]; how == "TERMINATED" {
		return &closure.Closure{How: "Terminated", By: "tester", Reason: "test"}, nil
	}
	return nil, nil
}

func (w *workflows) QueryStatus(_ context.Context, id string) (*entry.TaskStatus, error) {
	st, ok := w.running[id]
	if !ok {
		return nil, errors.New("not running")
	}
	c := *st
	return &c, nil
}

func (w *workflows) Wait(context.Context, string) error { return nil }

func (w *workflows) Signal(_ context.Context, id, name string, _ entry.SignalPayload) error {
	w.signals = append(w.signals, name+" "+id)
	return nil
}

type intakeFixture struct {
	wf    *workflows
	runs  *entrydb.Store
	sub   *intake.Submitter
	tasks *intake.Tasks
	name  string
}

func newIntakeFixture(t *testing.T) *intakeFixture {
	t.Helper()
	db := testenv.Mongo(t)
	pipes := pipelinedb.New(db)
	name := testenv.Unique("intake_")
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: "vendor", Endpoint: "/reply"}}}}
	if _, _, err := pipes.PublishSchema(context.Background(), def); err != nil {
		t.Fatal(err)
	}
	f := &intakeFixture{wf: newWorkflows(), runs: entrydb.New(db), name: name}
	cfg := &config.Entry{RetryMax: 2, RetryMaxLimit: 5, EnqueueTimeout: time.Second, UserID: "entry", FeatureID: "entry",
		HTTPRetryDelays: []time.Duration{time.Second}}
	f.sub = &intake.Submitter{Runs: f.runs, Pipelines: pipes, Workflows: f.wf, Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f.tasks = &intake.Tasks{Runs: f.runs, Workflows: f.wf}
	return f
}

func (f *intakeFixture) envelope(key string) entry.TaskEnvelope {
	return entry.TaskEnvelope{TaskID: entry.TaskID(key), Type: entry.TaskType, Retry: entry.Retry{Max: 2},
		Payload: entry.Payload{WorkflowID: f.name, UserText: "hi", HistoryChunks: []string{}, Source: "test",
			CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": "c1"}},
			Telemetry:    entry.Telemetry{Channel: entry.ChannelHTTP}},
		Context: entry.Context{IdempotencyKey: key}}
}

// Submit starts the task's workflow through Workflows and writes nothing; the same key again is
// a duplicate of the same task, a key whose task has run is answered from workflow_runs, an
// unknown pipeline starts nothing, and a start Temporal does not answer is an EnqueueError.
func TestSubmitStartsThroughWorkflows(t *testing.T) {
	f := newIntakeFixture(t)
	ctx := context.Background()
	env := f.envelope(testenv.Unique("http:wf:c1:"))

	acc, err := f.sub.Submit(ctx, env)
	if err != nil || acc.TaskID != env.TaskID || acc.Duplicate || acc.Status != entry.StatusPending {
		t.Fatalf("first submit: %+v %v", acc, err)
	}
	in := f.wf.started[env.TaskID]
	if in.Envelope.TaskID != env.TaskID || in.UserID != "entry" || in.FeatureID != "entry" || len(in.RetryDelays) == 0 || in.Reply {
		t.Fatalf("started with %+v", in)
	}
	if _, err := f.runs.Get(ctx, env.TaskID); !errors.Is(err, entry.ErrNotFound) {
		t.Fatalf("the intake wrote workflow_runs: %v", err)
	}
	if acc, err := f.sub.Submit(ctx, env); err != nil || !acc.Duplicate || acc.TaskID != env.TaskID {
		t.Fatalf("same key again: %+v %v", acc, err)
	}

	// The task ran and Temporal forgot it: the recorded status answers.
	if _, err := f.runs.Accept(ctx, entry.NewRun(env)); err != nil {
		t.Fatal(err)
	}
	if err := f.runs.Record(ctx, entry.StatusUpdate{TaskID: env.TaskID, Seq: 1, Status: entry.StatusCompleted, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	delete(f.wf.started, env.TaskID)
	acc, err = f.sub.Submit(ctx, env)
	if err != nil || !acc.Duplicate || acc.Recorded == nil || acc.Recorded.Status != entry.StatusCompleted || acc.Recorded.From != entrydb.CollRuns {
		t.Fatalf("a key whose task ran: %+v %v", acc, err)
	}

	unknown := f.envelope(testenv.Unique("http:wf:c2:"))
	unknown.Payload.WorkflowID = f.name + "_missing"
	if _, err := f.sub.Submit(ctx, unknown); !errors.Is(err, entry.ErrUnknownWorkflow) {
		t.Fatalf("unknown pipeline: %v", err)
	}
	if _, ok := f.wf.started[unknown.TaskID]; ok {
		t.Fatal("an unknown pipeline was started")
	}

	f.wf.startErr = errors.New("temporal: connection refused")
	var ee *intake.EnqueueError
	if _, err := f.sub.Submit(ctx, f.envelope(testenv.Unique("http:wf:c3:"))); !errors.As(err, &ee) || ee.Dependency != "temporal" {
		t.Fatalf("temporal down: %v", err)
	}
}

// Status comes from the workflow's query while it runs and from workflow_runs otherwise; an
// execution that closed without recording a final status is failed. Resume is signalled only to
// a suspended task.
func TestStatusAndSignalsThroughWorkflows(t *testing.T) {
	f := newIntakeFixture(t)
	ctx := context.Background()
	env := f.envelope(testenv.Unique("http:wf:c1:"))
	if _, err := f.tasks.Status(ctx, env.TaskID); !errors.Is(err, entry.ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	if _, err := f.runs.Accept(ctx, entry.NewRun(env)); err != nil {
		t.Fatal(err)
	}

	f.wf.running[env.TaskID] = &entry.TaskStatus{TaskID: env.TaskID, Status: entry.StatusProcessing}
	if st, err := f.tasks.Status(ctx, env.TaskID); err != nil || st.Status != entry.StatusProcessing || st.From != "workflow" {
		t.Fatalf("running: %+v %v", st, err)
	}
	if _, err := f.tasks.Resume(ctx, env.TaskID, entry.SignalPayload{}); !errors.Is(err, entry.ErrNotSuspended) || len(f.wf.signals) != 0 {
		t.Fatalf("resume of a processing task: %v %v", err, f.wf.signals)
	}
	f.wf.running[env.TaskID].Status = entry.StatusSuspended
	if prev, err := f.tasks.Resume(ctx, env.TaskID, entry.SignalPayload{Reason: "fixed"}); err != nil || prev.Status != entry.StatusSuspended ||
		len(f.wf.signals) != 1 || f.wf.signals[0] != entry.SignalResume+" "+env.TaskID {
		t.Fatalf("resume of a suspended task: %+v %v %v", prev, err, f.wf.signals)
	}

	delete(f.wf.running, env.TaskID)
	f.wf.closed[env.TaskID] = "TERMINATED"
	if st, err := f.tasks.Status(ctx, env.TaskID); err != nil || st.Status != entry.StatusTerminated || st.From != entrydb.CollRuns ||
		st.LastError != "workflow terminated by tester: test" {
		t.Fatalf("terminated: %+v %v", st, err)
	}
	// The record followed (guarded write): the task answers terminated from workflow_runs alone.
	if run, err := f.tasks.Runs.Get(ctx, env.TaskID); err != nil || run.Status != entry.StatusTerminated {
		t.Fatalf("workflow_runs after the terminate: %+v %v", run, err)
	}
	// The write is guarded: a final status is never overwritten.
	if changed, err := f.tasks.Runs.MarkTerminated(ctx, env.TaskID, "again", time.Now()); err != nil || changed {
		t.Fatalf("second terminate write: changed %v, %v", changed, err)
	}
}

// The first requests naming a pipeline, sent at once, check it with one read: the concurrent
// lookups of one pipeline share it (the bench's apply row paid one per concurrent client).
func TestConcurrentFirstSubmitsReadThePipelineOnce(t *testing.T) {
	f := newIntakeFixture(t)
	intake.RememberPipelines(f.sub)
	ctx, tally := mongox.WithTally(context.Background())
	const clients = 8
	testenv.AtOnce(t, clients, func(i int) error {
		_, err := f.sub.Submit(ctx, f.envelope(testenv.Unique(fmt.Sprintf("http:wf:burst%d:", i))))
		return err
	})
	reads := 0
	for _, c := range tally.Commands() {
		if c.Collection == pipelinedb.CollSchemas {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("%d concurrent first submits read the pipeline %d times (%s); want 1", clients, reads, tally)
	}
}
