package pipeline

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one validation problem. StepIndex is -1 for a problem outside `steps`.
type FieldError struct {
	StepIndex int
	StepName  string
	Field     string
	Message   string
}

// Path is the JSON path of the field inside the schema, e.g. "steps[1].scf_function".
func (e *FieldError) Path() string {
	if e.StepIndex < 0 {
		return e.Field
	}
	if e.Field == "" {
		return fmt.Sprintf("steps[%d]", e.StepIndex)
	}
	return fmt.Sprintf("steps[%d].%s", e.StepIndex, e.Field)
}

func (e *FieldError) Error() string {
	if e.StepIndex < 0 {
		return fmt.Sprintf("%s: %s", e.Field, e.Message)
	}
	name := e.StepName
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("step %d %q: %s: %s", e.StepIndex, name, e.Path(), e.Message)
}

// ValidationError collects every problem found in one schema, so a client fixes them in one round.
type ValidationError struct {
	Problems []*FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return "invalid pipeline schema: " + strings.Join(msgs, "; ")
}

// First is the first problem; the HTTP layer names its field in the error details.
func (e *ValidationError) First() *FieldError { return e.Problems[0] }

// AsFieldError finds the first FieldError in err (a ValidationError or a bare FieldError).
func AsFieldError(err error) (*FieldError, bool) {
	var ve *ValidationError
	if errors.As(err, &ve) && len(ve.Problems) > 0 {
		return ve.First(), true
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

// ErrNotFound: no such pipeline, version, task, step, provider, function or quota. The store's
// not-found errors wrap it (and the driver's, so the HTTP layer's store-error mapping answers 404).
var ErrNotFound = errors.New("not found")
