package entry

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/refusal"
)

// A refusal is an answer "no" from the entry subsystem: a request the API turns down, a task in
// the wrong state for an operator's signal, a reply Telegram will not take. Each kind is declared
// once, in Refusals, and everything else reads it: the activities raise it (Refuse, RefuseAs),
// the workflow's retry policy leaves its non-retryable kinds alone (NonRetryableRefusalTypes) and
// the HTTP layer answers it with its status, code and message (RefusalKindOf). Adding a kind is
// its sentinel and a row here, and a case in refusals_test.go.

// Error types of the refusals that cross Temporal (the ApplicationError types the activities
// raise; the Web UI shows them).
const (
	// ErrTypeTelegramRejected: Telegram refused the reply for good.
	ErrTypeTelegramRejected = "EntryTelegramRejected"
	// ErrTypeTelegramRateLimited: Telegram's flood control held the reply back; the next attempt
	// waits its retry_after.
	ErrTypeTelegramRateLimited = "EntryTelegramRateLimited"
)

// The refusals' sentinels (ErrNotFound is declared beside the store's documents, ErrRejected
// beside the Telegram client's errors).
var (
	// ErrInvalidRequest: a request field is missing or wrong; *FieldError is one.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnknownWorkflow: the envelope's workflowId names no published pipeline.
	ErrUnknownWorkflow = errors.New("unknown workflowId")
	// ErrNotSuspended: resume/drop asked of a task in a state that does not take it.
	ErrNotSuspended = errors.New("task is not waiting for an operator")
	// ErrRateLimited: Telegram's 429; *RetryAfterError is one.
	ErrRateLimited = errors.New("telegram rate limit")
)

// RefusalKind is one kind of refusal (Field and Reason are used by entry only).
type RefusalKind = refusal.Kind

// Refusals is the table of refusal kinds, in the order RefusalKindOf tries them.
var Refusals = refusal.Table{
	{Sentinel: ErrInvalidRequest, HTTPStatus: 400, Code: "VALIDATION_ERROR"},
	{Sentinel: ErrUnknownWorkflow, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND", Message: "workflow not found", Field: "workflowId", Reason: true},
	{Sentinel: ErrNotFound, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND", Message: "task not found"},
	{Sentinel: ErrNotSuspended, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeTelegramRejected, Sentinel: ErrRejected},
	{Type: ErrTypeTelegramRateLimited, Sentinel: ErrRateLimited, Retryable: true},
}

// NonRetryableRefusalTypes are the error types of Refusals' non-retryable kinds, in table order.
func NonRetryableRefusalTypes() []string { return Refusals.NonRetryableTypes() }

// RefusalKindOf is the kind whose sentinel err wraps (the first in table order).
func RefusalKindOf(err error) (RefusalKind, bool) { return Refusals.Of(err) }

// Refuse is the activity's error for err when err is a refusal that crosses Temporal: an
// ApplicationError of the kind's type with err's message and err as its cause, retryable as the
// kind says, whose next retry waits a *RetryAfterError's After. Any other err is returned as it
// is, to be retried.
func Refuse(err error) error {
	k, ok := RefusalKindOf(err)
	if !ok || k.Type == "" {
		return err
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: !k.Retryable, Cause: err}
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		opts.NextRetryDelay = ra.After
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), k.Type, opts)
}

// RefuseAs is the refusal of the kind of sentinel with msg, for an activity that words its own
// message.
func RefuseAs(sentinel error, msg string) error {
	k, ok := RefusalKindOf(sentinel)
	if !ok || k.Type == "" {
		return fmt.Errorf("%s: %w", msg, sentinel) // a programming error the table test rules out
	}
	return temporal.NewApplicationErrorWithOptions(msg, k.Type, temporal.ApplicationErrorOptions{NonRetryable: !k.Retryable})
}
