package taskecho

import (
	"errors"
	"fmt"
)

// Kind classifies a domain error so the HTTP layer can map it to a status and code.
type Kind int

// Error kinds.
const (
	KindNotFound Kind = iota + 1
	KindConflict
	KindGone
	KindValidation
	KindDuplicate
	// KindLeaseExpired: the call names a lease whose lease_expires_at has passed (409).
	KindLeaseExpired
)

// Error is a domain failure with the message and details TaskEcho clients see.
type Error struct {
	Kind    Kind
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

func notFound(msg string, details map[string]any) *Error {
	return &Error{Kind: KindNotFound, Message: msg, Details: details}
}

func conflict(msg string, details map[string]any) *Error {
	return &Error{Kind: KindConflict, Message: msg, Details: details}
}

func gone(msg string, details map[string]any) *Error {
	return &Error{Kind: KindGone, Message: msg, Details: details}
}

func invalid(field, msg string) *Error {
	return &Error{Kind: KindValidation, Message: msg, Details: map[string]any{"field": field}}
}

// IsKind reports whether err is a domain *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// errContended is returned when a task kept changing under an operation for every retry.
var errContended = errors.New("task is being modified concurrently")

func projectNotFound(projectID string) *Error {
	return notFound("项目不存在", map[string]any{"project_id": projectID})
}

func queueNotFound(details map[string]any) *Error { return notFound("任务队列不存在", details) }

func taskNotFound(details map[string]any) *Error { return notFound("任务不存在", details) }

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
