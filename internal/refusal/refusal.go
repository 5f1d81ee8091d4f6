// Package refusal is the shape of a subsystem's refusal table: each kind of "no" that retrying the
// same request does not change, declared once with everything every layer needs to know of it
// (docs/architecture.md "Adding a refusal kind"). The tables themselves live in their subsystems
// (pipeline.Refusals, entry.Refusals); this package only reads them.
package refusal

import "errors"

// Kind is one kind of refusal.
type Kind struct {
	// Type, for a kind an activity or validator raises, is its ApplicationError type, which retry
	// policies name and the Web UI shows; empty for a kind that never crosses Temporal.
	Type string
	// Sentinel is what errors of the kind wrap, and what the client and the HTTP layer recognise.
	Sentinel error
	// Retryable: the activity's retry policy retries it (a refusal a later attempt may not
	// repeat). A non-retryable kind with a Type is in Table.NonRetryableTypes.
	Retryable bool
	// HTTPStatus and Code are the API's answer (the error envelope's status and code); 0 for a
	// kind no request is answered with. A number, not net/http's constant: workflows read the
	// tables and must not link net/http.
	HTTPStatus int
	Code       string
	// Message, when set, is the API's message instead of the refusal's own (which may say more
	// than a caller should read, or less than it needs).
	Message string
	// Field, when set, is the request field the API names (details.field).
	Field string
	// Reason: the API gives the refusal's own message as details.reason.
	Reason bool
}

// Table is a subsystem's refusal kinds. Its order is fixed: lookups try it in order, and
// NonRetryableTypes, which a workflow's retry policy holds, follows it.
type Table []Kind

// NonRetryableTypes are the error types of the non-retryable kinds that cross Temporal, in table
// order (a retry policy is part of a workflow's commands, so it must not come from a map's order).
func (t Table) NonRetryableTypes() []string {
	var types []string
	for _, k := range t {
		if k.Type != "" && !k.Retryable {
			types = append(types, k.Type)
		}
	}
	return types
}

// Of is the kind whose sentinel err wraps (the first in table order).
func (t Table) Of(err error) (Kind, bool) {
	for _, k := range t {
		if errors.Is(err, k.Sentinel) {
			return k, true
		}
	}
	return Kind{}, false
}

// OfType is the kind of the ApplicationError type errType.
func (t Table) OfType(errType string) (Kind, bool) {
	for _, k := range t {
		if k.Type != "" && k.Type == errType {
			return k, true
		}
	}
	return Kind{}, false
}
