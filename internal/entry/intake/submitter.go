// Package intake is the service side of the entry subsystem: the submitter every intake (HTTP,
// Telegram, CLI) shares, the task status and operator views, and the suspended-task monitor. It
// orchestrates the workflow_runs store (entrydb), the pipeline store and Temporal, which it
// reaches through Workflows (implemented by workflows/entry's Client).
package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/entryprom"
	"github.com/taskloom/taskloom/internal/joinread"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

// EventEnqueueFailed is the log event of an envelope that could not be enqueued: an envelope is
// never dropped silently (docs/entry.md "Operator runbook (suspended tasks)").
const EventEnqueueFailed = "queue.enqueue_failed"

// EnqueueError is an envelope refused because a dependency did not answer; the intake answers
// 503 with Retry-After, and the caller retries with the same key.
type EnqueueError struct {
	Dependency string
	Err        error
}

func (e *EnqueueError) Error() string {
	return fmt.Sprintf("enqueue failed: %s unavailable: %v", e.Dependency, e.Err)
}

func (e *EnqueueError) Unwrap() error { return e.Err }

// Submitter is the one door every intake (HTTP, Telegram, CLI) goes through: it checks the
// pipeline exists and starts the EntryTaskWorkflow whose ID derives from the idempotency key. It
// writes nothing: the workflow records the task in workflow_runs itself (entrydb.Store.Accept, its
// first activity), so an intake that dies at any point leaves either no task or a running workflow that
// records itself — never a document without a workflow, and nothing to undo.
type Submitter struct {
	Runs      *entrydb.Store
	Pipelines *pipelinedb.Store
	Workflows Workflows
	Config    *config.Entry
	Log       *slog.Logger
	Metrics   *entryprom.Metrics
	// known remembers pipelines seen to exist. Published pipeline versions are never removed, so
	// a pipeline that existed still does and the lookup need not be repeated; nil reads every time.
	known *lru.Cache[string, struct{}]
	// checking joins the concurrent first lookups of one pipeline into one read.
	checking singleflight.Group
}

// knownPipelines bounds how many (pipeline, version) pairs a submitter remembers.
const knownPipelines = 4096

// Accepted is the intake's answer: the task, its status and retry budget, and whether the key
// had been seen before.
type Accepted struct {
	TaskID    string      `json:"taskId"`
	Status    string      `json:"status"`
	Retry     entry.Retry `json:"retry"`
	Duplicate bool        `json:"duplicate"`
	// Recorded is the task's workflow_runs status when the answer came from that document (a key
	// whose task has already run); nil otherwise.
	Recorded *entry.TaskStatus `json:"-"`
	// Owner is who submitted a duplicate's task when its workflow_runs document was read ("" when
	// it was not), so that the intake answers another owner's task without its content.
	Owner string `json:"-"`
}

// Submit enqueues env. The same key always yields the same task. The workflow is started with
// policies that refuse a second execution of the ID while one runs or after one closed, and that
// refusal marks a duplicate. Beside the start, Submit reads the key's workflow_runs document: it
// answers a key whose task has already run with the recorded status, which holds after
// Temporal's retention has forgotten the run (the start is then not refused; the new execution
// finds the document and ends without running the task again, see EntryAccept). The read runs
// concurrently with the start, so an apply costs about one start. MongoDB cost: that read, plus
// the pipeline lookup the first time a pipeline is named. Errors: entry.ErrUnknownWorkflow,
// *EnqueueError, *FieldError.
func (s *Submitter) Submit(ctx context.Context, env entry.TaskEnvelope) (*Accepted, error) {
	if env.Retry.Max > s.Config.RetryMaxLimit {
		return nil, &entry.FieldError{Field: "retryMax", Message: fmt.Sprintf("must be at most %d (ENTRY_RETRY_MAX_LIMIT)", s.Config.RetryMaxLimit)}
	}
	log := s.Log.With("task_id", env.TaskID, "channel", env.Payload.Telemetry.Channel, "workflow_id", env.Payload.WorkflowID,
		"idempotency_key", env.Context.IdempotencyKey, "trace_id", env.Context.TraceID)
	if err := s.checkPipeline(ctx, env.Payload.WorkflowID, env.Payload.WorkflowVersion); err != nil {
		if errors.Is(err, entry.ErrUnknownWorkflow) {
			return nil, err
		}
		return nil, s.failed(log, env, "mongo", err)
	}
	recorded := s.lookup(ctx, env.TaskID)
	created, err := s.start(ctx, env)
	prev := <-recorded
	switch {
	case prev.run != nil && !prev.run.Unstarted():
		s.count(env, "duplicate")
		return &Accepted{TaskID: prev.run.TaskID, Status: prev.run.Status, Retry: prev.run.Retry, Duplicate: true,
			Recorded: statusOfRun(prev.run), Owner: prev.run.Owner}, nil
	case err != nil:
		return nil, s.failed(log, env, "temporal", err)
	case prev.err != nil:
		// Temporal holds the task (started now or before), and its workflow records itself once
		// MongoDB answers; only a run older than Temporal's retention could have been missed.
		log.Warn("workflow_runs not read; answering from the start", "err", prev.err)
	}
	if !created || prev.run != nil {
		// The key was seen before: another submit started the workflow (which may not have
		// recorded itself yet), or an older intake recorded the task without starting it.
		s.count(env, "duplicate")
		acc := &Accepted{TaskID: env.TaskID, Status: entry.StatusPending, Retry: env.Retry, Duplicate: true}
		if prev.run != nil {
			acc.Owner = prev.run.Owner
		}
		return acc, nil
	}
	s.count(env, "created")
	log.Info("entry task accepted")
	return &Accepted{TaskID: env.TaskID, Status: entry.StatusPending, Retry: env.Retry}, nil
}

// recorded is the key's workflow_runs document, or why it could not be read (not found is no
// error: run is nil).
type recorded struct {
	run *entry.Run
	err error
}

// lookup reads taskID's document on its own goroutine; the channel delivers the one answer.
func (s *Submitter) lookup(ctx context.Context, taskID string) <-chan recorded {
	out := make(chan recorded, 1)
	go func() {
		run, err := s.Runs.Get(ctx, taskID)
		if errors.Is(err, entry.ErrNotFound) {
			run, err = nil, nil
		}
		out <- recorded{run: run, err: err}
	}()
	return out
}

// checkPipeline returns entry.ErrUnknownWorkflow unless the pipeline (at version, or any version when
// it is empty) is published. A pipeline seen once is not looked up again (see known).
func (s *Submitter) checkPipeline(ctx context.Context, name, version string) error {
	key := name + "@" + version
	if s.known != nil && s.known.Contains(key) {
		return nil
	}
	_, err := joinread.Do(&s.checking, ctx, key, func(ctx context.Context) (struct{}, error) {
		if _, err := s.Pipelines.GetSchema(ctx, name, version); err != nil {
			return struct{}{}, err
		}
		if s.known != nil {
			s.known.Add(key, struct{}{})
		}
		return struct{}{}, nil
	})
	if errors.Is(err, pipeline.ErrNotFound) {
		return fmt.Errorf("%w: no pipeline %q", entry.ErrUnknownWorkflow, name)
	}
	return err
}

// start starts the workflow within ENTRY_ENQUEUE_TIMEOUT and reports whether this call created
// it. Temporal refuses a second start while the task runs or after it closed (Workflows.Start
// answers created=false), which means the task exists.
func (s *Submitter) start(ctx context.Context, env entry.TaskEnvelope) (created bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.Config.EnqueueTimeout)
	defer cancel()
	return s.Workflows.Start(ctx, s.Input(env))
}

// Input is the EntryTaskWorkflow input of env, exactly what Submit starts (the bench starts the
// same to measure what the intake adds).
func (s *Submitter) Input(env entry.TaskEnvelope) entry.WorkflowInput {
	user := s.Config.UserID
	if id := env.Context.UserID(); id != "" {
		user = id
	}
	dropAfter := s.Config.SuspendedDropAfter
	return entry.WorkflowInput{Envelope: env, UserID: user, FeatureID: s.Config.FeatureID,
		RetryDelays: entry.RetryDelays(s.Config, env.Payload.Telemetry.Channel, env.Retry.Max),
		Reply:       env.Payload.Telemetry.Channel == entry.ChannelTelegram && s.Config.TelegramBotToken != "",
		ReplyField:  s.Config.TelegramReplyField, SuspendedDropAfter: &dropAfter}
}

// failed logs queue.enqueue_failed at error level and returns the error the intake answers 503 to.
func (s *Submitter) failed(log *slog.Logger, env entry.TaskEnvelope, dep string, err error) error {
	log.Error("envelope could not be enqueued", "event", EventEnqueueFailed, "dependency", dep, "err", err)
	if s.Metrics != nil {
		s.Metrics.EnqueueFailed.WithLabelValues(env.Payload.Telemetry.Channel, dep).Inc()
	}
	return &EnqueueError{Dependency: dep, Err: err}
}

func (s *Submitter) count(env entry.TaskEnvelope, outcome string) {
	if s.Metrics != nil {
		s.Metrics.Submitted.WithLabelValues(env.Payload.Telemetry.Channel, outcome).Inc()
	}
}
