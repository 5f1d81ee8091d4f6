package httpx

import (
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
)

// TemporalRetryAfter is the Retry-After a client gets while Temporal is unreachable.
const TemporalRetryAfter = 5 * time.Second

// FromTemporal maps Temporal client errors: unknown execution → 404, already started → 409,
// unreachable frontend → 503 with Retry-After. Others pass through.
func FromTemporal(err error) error {
	if err == nil {
		return nil
	}
	var (
		nf  *serviceerror.NotFound
		as  *serviceerror.WorkflowExecutionAlreadyStarted
		un  *serviceerror.Unavailable
		dl  *serviceerror.DeadlineExceeded
		rex *serviceerror.ResourceExhausted
	)
	switch {
	case errors.As(err, &nf):
		return NotFound("workflow")
	case errors.As(err, &as):
		return Conflict("the workflow is already running")
	case errors.As(err, &un), errors.As(err, &dl), errors.As(err, &rex):
		return Unavailable("temporal", TemporalRetryAfter)
	}
	return err
}
