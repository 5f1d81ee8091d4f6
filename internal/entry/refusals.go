package entry

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
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

// RefusalKind is one kind of refusal.
type RefusalKind struct {
	// Type, for a kind an activity raises, is its ApplicationError type, which retry policies
	// name; empty for a kind that never crosses Temporal.
	Type string
	// Sentinel is what errors of the kind wrap, and what the HTTP layer recognises.
	Sentinel error
	// Retryable: the activity's retry policy retries it. A non-retryable kind with a Type is in
	// NonRetryableRefusalTypes.
	Retryable bool
	// HTTPStatus and Code are the API's answer (the error envelope's status and code); 0 for a
	// kind no request is answered with (the reply runs after the request). A number, not
	// net/http's constant: the workflows read this table and must not link net/http.
	HTTPStatus int
	Code       string
	// Message, when set, is the API's message instead of the refusal's own.
	Message string
	// Field, when set, is the request field the API names (details.field); a *FieldError names
	// its own.
	Field string
	// Reason: the API gives the refusal's own message as details.reason.
	Reason bool
}

// Refusals is the table of refusal kinds, in the order RefusalKindOf tries them.
var Refusals = []RefusalKind{
	{Sentinel: ErrInvalidRequest, HTTPStatus: 400, Code: "VALIDATION_ERROR"},
	{Sentinel: ErrUnknownWorkflow, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND", Message: "workflow not found", Field: "workflowId", Reason: true},
	{Sentinel: ErrNotFound, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND", Message: "task not found"},
	{Sentinel: ErrNotSuspended, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeTelegramRejected, Sentinel: ErrRejected},
	{Type: ErrTypeTelegramRateLimited, Sentinel: ErrRateLimited, Retryable: true},
}

// NonRetryableRefusalTypes are the error types of Refusals' non-retryable kinds, in table order
// (a workflow's retry policy holds them, so they must not come from a map's random order).
func NonRetryableRefusalTypes() []string {
	var types []string
	for _, k := range Refusals {
		if k.Type != "" && !k.Retryable {
			types = append(types, k.Type)
		}
	}
	return types
}

// RefusalKindOf is the kind whose sentinel err wraps (the first in table order).
func RefusalKindOf(err error) (RefusalKind, bool) {
	for _, k := range Refusals {
		if errors.Is(err, k.Sentinel) {
			return k, true
		}
	}
	return RefusalKind{}, false
}

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
