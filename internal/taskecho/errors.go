package taskecho

import (
	"errors"
	"fmt"
)

// Kind classifies a domain error. Each kind is declared once, as a constant and its row in
// Kinds, and every layer reads the row: the API's status and code, and whether a batch answer
// names the code. Adding a kind is its constant and its row, and a case in errors_test.go. No
// kind crosses Temporal (the queue operations' activities answer with counts), so none has a
// retry policy to name it.
type Kind int

// Error kinds.
const (
	KindNotFound Kind = iota + 1
	KindConflict
	KindGone
	KindValidation
	KindDuplicate
	// KindLeaseExpired: the call names a lease whose lease_expires_at has passed.
	KindLeaseExpired
	// kindEnd is one past the last kind: the table test walks every kind up to it.
	kindEnd
)

// KindRow is how the API answers a kind.
type KindRow struct {
	Kind Kind
	// HTTPStatus and Code are the error envelope's status and code. A number, not net/http's
	// constant: this package links no HTTP server.
	HTTPStatus int
	Code       string
	// InBatch: an item of a batch release or confirm that failed with this kind shows its code
	// beside its reason (TaskEcho's batch answers name only these).
	InBatch bool
}

// Kinds is the table of error kinds, one row per kind.
var Kinds = []KindRow{
	{Kind: KindNotFound, HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND"},
	{Kind: KindConflict, HTTPStatus: 409, Code: "CONFLICT", InBatch: true},
	{Kind: KindGone, HTTPStatus: 410, Code: "GONE"},
	{Kind: KindValidation, HTTPStatus: 400, Code: "VALIDATION_ERROR"},
	{Kind: KindDuplicate, HTTPStatus: 409, Code: "DUPLICATE_KEY"},
	{Kind: KindLeaseExpired, HTTPStatus: 409, Code: "LEASE_EXPIRED", InBatch: true},
}

// Row is k's row in Kinds; a kind without one (which the table test rules out) is answered as a
// validation error.
func (k Kind) Row() KindRow {
	for _, r := range Kinds {
		if r.Kind == k {
			return r
		}
	}
	return KindRow{Kind: k, HTTPStatus: 400, Code: "VALIDATION_ERROR"}
}

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
	got, ok := KindOf(err)
	return ok && got == k
}

// KindOf is the kind of the domain *Error err wraps; ok is false when it wraps none.
func KindOf(err error) (k Kind, ok bool) {
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	return e.Kind, true
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
