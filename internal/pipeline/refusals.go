package pipeline

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/refusal"
)

// A refusal is an answer "no" that no retry changes: the task was not admitted, the redrive or
// the callback was refused. Each kind is declared once, in Refusals, and everything else reads it:
// the activities and update validators raise it (Refuse, RefuseAs), the workflow's retry policies
// leave its non-retryable kinds alone (NonRetryableRefusalTypes), the client turns it back into
// its sentinel (AsRefusal) and the HTTP layer answers it with its status and code
// (RefusalKindOf). Adding a kind is a row here plus its sentinel and error type, and a case in
// refusals_test.go.

// Error types of the refusals (the ApplicationError types the activities and validators raise).
const (
	// Admission refusals: the task was not created (nothing charged, nothing written).
	ErrTypeUnknownPipeline = "PipelineNotFound"
	ErrTypeInvalidInput    = "PipelineInvalidInput"
	ErrTypeQuotaExhausted  = "PipelineQuotaExhausted"
	// ErrTypeIdempotencyConflict: the idempotency key was used with a different request.
	ErrTypeIdempotencyConflict = "PipelineIdempotencyConflict"

	// Redrive refusals (the redrive admission's errors).
	// ErrTypeRedriveConflict: the task is not failed (it runs, or it succeeded).
	ErrTypeRedriveConflict = "PipelineRedriveConflict"
	// ErrTypeRedriveExpired: the task failed longer ago than the redrive window.
	ErrTypeRedriveExpired = "PipelineRedriveExpired"
	// ErrTypeRedriveRepeated: this redrive id redrove the task before (and that run has ended);
	// the caller is answered with the earlier redrive.
	ErrTypeRedriveRepeated = "PipelineRedriveRepeated"

	// Callback refusals of the step-callback update's validator: no such step; a step that is not
	// waiting for a callback; a callback for a step the pipeline has left; a second callback.
	ErrTypeStepNotFound      = "PipelineStepNotFound"
	ErrTypeStepNotWaiting    = "PipelineStepNotWaiting"
	ErrTypeCallbackStale     = "PipelineCallbackStale"
	ErrTypeCallbackDelivered = "PipelineCallbackDelivered"
)

// The refusals' sentinels (ErrNotFound, ErrQuotaExhausted, ErrRedriveConflict and
// ErrRedriveExpired are shared with the store and CheckRedrive, and declared beside them).
var (
	// ErrInvalidInput: input_data lacks a field the schema reads, or cannot be recorded.
	// *InputError is one.
	ErrInvalidInput = errors.New("invalid input_data")
	// ErrIdempotencyConflict: the task id (idempotency key) is taken by a different request.
	ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")
	// ErrRedriveRepeated: the redrive id redrove the task before and that run has ended.
	ErrRedriveRepeated   = errors.New("the task was redriven by this request already")
	ErrStepNotFound      = errors.New("no such step")
	ErrStepNotWaiting    = errors.New("the step is not waiting for a callback")
	ErrCallbackStale     = errors.New("the pipeline has left this step")
	ErrCallbackDelivered = errors.New("the callback was delivered already")
)

// RefusalKind is one kind of refusal (pipeline kinds all cross Temporal: each has a Type).
type RefusalKind = refusal.Kind

// Refusals is the table of refusal kinds. Its order is fixed: NonRetryableRefusalTypes, which a
// workflow's retry policy holds, follows it.
var Refusals = refusal.Table{
	{Type: ErrTypeUnknownPipeline, Sentinel: ErrNotFound, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND"},
	{Type: ErrTypeInvalidInput, Sentinel: ErrInvalidInput, HTTPStatus: 400, Code: "VALIDATION_ERROR"},
	// 402: the request is fine and retrying will not help until the quota is raised.
	{Type: ErrTypeQuotaExhausted, Sentinel: ErrQuotaExhausted, HTTPStatus: 402, Code: "QUOTA_EXHAUSTED"},
	{Type: ErrTypeIdempotencyConflict, Sentinel: ErrIdempotencyConflict, HTTPStatus: 409, Code: "IDEMPOTENCY_CONFLICT",
		Message: "this Idempotency-Key was used with a different request body; use a new key for a new task"},
	{Type: ErrTypeRedriveConflict, Sentinel: ErrRedriveConflict, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeRedriveExpired, Sentinel: ErrRedriveExpired, HTTPStatus: 410, Code: "GONE"},
	// The API answers a repeated redrive with the earlier one (200), never with this status.
	{Type: ErrTypeRedriveRepeated, Sentinel: ErrRedriveRepeated, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeStepNotFound, Sentinel: ErrStepNotFound, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND"},
	{Type: ErrTypeStepNotWaiting, Sentinel: ErrStepNotWaiting, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeCallbackStale, Sentinel: ErrCallbackStale, HTTPStatus: 409, Code: "CONFLICT"},
	{Type: ErrTypeCallbackDelivered, Sentinel: ErrCallbackDelivered, HTTPStatus: 409, Code: "CONFLICT"},
}

// NonRetryableRefusalTypes are the error types of Refusals' non-retryable kinds, in table order.
func NonRetryableRefusalTypes() []string { return Refusals.NonRetryableTypes() }

// RefusalKindOf is the kind whose sentinel err wraps (the first in table order).
func RefusalKindOf(err error) (RefusalKind, bool) { return Refusals.Of(err) }

// Refuse is the activity's error for err when err is a refusal (it wraps a kind's sentinel): an
// ApplicationError of the kind's type with err's message and details. Any other err is returned
// as it is, to be retried.
func Refuse(err error, details ...any) error {
	k, ok := RefusalKindOf(err)
	if !ok {
		return err
	}
	return applicationError(k, err.Error(), details)
}

// RefuseAs is the refusal of the kind of sentinel with msg, for an activity or update validator
// that words its own message. A sentinel of no kind is a programming error; its refusal is an
// ordinary (retried) error, which the table test rules out.
func RefuseAs(sentinel error, msg string, details ...any) error {
	k, ok := RefusalKindOf(sentinel)
	if !ok {
		return fmt.Errorf("%s: %w", msg, sentinel)
	}
	return applicationError(k, msg, details)
}

func applicationError(k RefusalKind, msg string, details []any) error {
	return temporal.NewApplicationErrorWithOptions(msg, k.Type,
		temporal.ApplicationErrorOptions{NonRetryable: !k.Retryable, Details: details})
}

// RefusalError is a refusal as the client returns it: errors.Is matches its kind's sentinel.
type RefusalError struct {
	Kind    RefusalKind
	Message string
	// Field is the input_data field an ErrTypeInvalidInput refusal names (InputRefusal).
	Field string
}

func (e *RefusalError) Error() string { return e.Message }
func (e *RefusalError) Unwrap() error { return e.Kind.Sentinel }

// AsRefusal is the refusal err carries (an ApplicationError of a kind's type, raised by Refuse or
// RefuseAs), or nil. Pure and in table order: the workflow calls it too.
func AsRefusal(err error) *RefusalError {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return nil
	}
	k, ok := Refusals.OfType(ae.Type())
	if !ok {
		return nil
	}
	re := &RefusalError{Kind: k, Message: ae.Message()}
	var d InputRefusal
	if ae.HasDetails() && ae.Details(&d) == nil {
		re.Field = d.Field
	}
	return re
}

// InputRefusal is the detail of an ErrTypeInvalidInput refusal: the field the HTTP layer names.
type InputRefusal struct {
	Field string
}
