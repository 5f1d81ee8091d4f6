package entry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// EventEnqueueFailed is the log event of an envelope that could not be enqueued (seed 001: never
// a silent drop).
const EventEnqueueFailed = "queue.enqueue_failed"

// ErrUnknownWorkflow: the envelope's workflowId names no published pipeline (HTTP 404).
var ErrUnknownWorkflow = errors.New("unknown workflowId")

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
// pipeline exists, records the envelope in workflow_runs under its idempotency key and starts
// the EntryTaskWorkflow whose ID derives from that key.
type Submitter struct {
	Runs      *Store
	Pipelines *pipeline.Store
	Temporal  client.Client
	TaskQueue string
	Config    *config.Entry
	Log       *slog.Logger
	Metrics   *Metrics
}

// Accepted is the intake's answer: the task, its status and retry budget, and whether the key
// had been seen before.
type Accepted struct {
	TaskID    string `json:"taskId"`
	Status    string `json:"status"`
	Retry     Retry  `json:"retry"`
	Duplicate bool   `json:"duplicate"`
}

// Submit enqueues env. The same key always yields the same task: a second submit finds the
// workflow_runs document (unique key) and, unless the task already ended, starts the workflow
// with a conflict policy that returns the running execution and a reuse policy that refuses to
// run a closed one again. Errors: ErrUnknownWorkflow, *EnqueueError, *FieldError.
func (s *Submitter) Submit(ctx context.Context, env TaskEnvelope) (*Accepted, error) {
	if env.Retry.Max > s.Config.RetryMaxLimit {
		return nil, fieldErr("retryMax", "must be at most %d (ENTRY_RETRY_MAX_LIMIT)", s.Config.RetryMaxLimit)
	}
	log := s.Log.With("task_id", env.TaskID, "channel", env.Payload.Telemetry.Channel, "workflow_id", env.Payload.WorkflowID,
		"idempotency_key", env.Context.IdempotencyKey, "trace_id", env.Context.TraceID)
	if _, err := s.Pipelines.GetSchema(ctx, env.Payload.WorkflowID, env.Payload.WorkflowVersion); err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return nil, fmt.Errorf("%w: no pipeline %q", ErrUnknownWorkflow, env.Payload.WorkflowID)
		}
		return nil, s.failed(log, env, "mongo", err)
	}
	run, created, err := s.Runs.Claim(ctx, s.runOf(env))
	if err != nil {
		return nil, s.failed(log, env, "mongo", err)
	}
	acc := &Accepted{TaskID: run.TaskID, Status: run.Status, Retry: run.Retry, Duplicate: !created}
	if !created && Terminal(run.Status) {
		s.count(env, "duplicate")
		return acc, nil
	}
	if err := s.start(ctx, env); err != nil {
		if created {
			s.unclaim(log, env.TaskID)
		}
		return nil, s.failed(log, env, "temporal", err)
	}
	if created {
		s.count(env, "created")
		log.Info("entry task accepted")
	} else {
		s.count(env, "duplicate")
	}
	return acc, nil
}

func (s *Submitter) runOf(env TaskEnvelope) *Run {
	return &Run{TaskID: env.TaskID, IdempotencyKey: env.Context.IdempotencyKey, WorkflowID: env.Payload.WorkflowID,
		WorkflowVersion: env.Payload.WorkflowVersion, Channel: env.Payload.Telemetry.Channel, Source: env.Payload.Source,
		ChatID: env.Payload.ChatID(), Status: StatusPending, Retry: env.Retry}
}

// start starts (or finds) the workflow. USE_EXISTING makes a repeated start of a running task
// return it; REJECT_DUPLICATE refuses to start a closed one again, which the already-started error
// reports and which counts as success here: the task exists.
func (s *Submitter) start(ctx context.Context, env TaskEnvelope) error {
	ctx, cancel := context.WithTimeout(ctx, s.Config.EnqueueTimeout)
	defer cancel()
	opts := client.StartWorkflowOptions{
		ID:                                       env.TaskID,
		TaskQueue:                                s.TaskQueue,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(StatusPending), searchattr.Key.ValueSet(env.Context.IdempotencyKey),
			searchattr.Channel.ValueSet(env.Payload.Telemetry.Channel)),
	}
	_, err := s.Temporal.ExecuteWorkflow(ctx, opts, WorkflowType, s.inputOf(env))
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", env.TaskID, err)
	}
	return nil
}

func (s *Submitter) inputOf(env TaskEnvelope) WorkflowInput {
	user := s.Config.UserID
	if id := idText(env.Context.User["id"]); id != "" {
		user = id
	}
	return WorkflowInput{Envelope: env, UserID: user, FeatureID: s.Config.FeatureID,
		RetryDelays: RetryDelays(s.Config, env.Payload.Telemetry.Channel, env.Retry.Max),
		Reply:       env.Payload.Telemetry.Channel == ChannelTelegram && s.Config.TelegramBotToken != "",
		ReplyField:  s.Config.TelegramReplyField}
}

// failed logs queue.enqueue_failed at error level and returns the error the intake answers 503 to.
func (s *Submitter) failed(log *slog.Logger, env TaskEnvelope, dep string, err error) error {
	log.Error("envelope could not be enqueued", "event", EventEnqueueFailed, "dependency", dep, "err", err)
	if s.Metrics != nil {
		s.Metrics.EnqueueFailed.WithLabelValues(env.Payload.Telemetry.Channel, dep).Inc()
	}
	return &EnqueueError{Dependency: dep, Err: err}
}

// unclaim removes the document of a task that never started, detached from the request's context
// (which may be the thing that expired).
func (s *Submitter) unclaim(log *slog.Logger, taskID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Runs.Unclaim(ctx, taskID); err != nil {
		log.Warn("unstarted task left in workflow_runs; a retry with the same key starts it", "err", err)
	}
}

func (s *Submitter) count(env TaskEnvelope, outcome string) {
	if s.Metrics != nil {
		s.Metrics.Submitted.WithLabelValues(env.Payload.Telemetry.Channel, outcome).Inc()
	}
}
