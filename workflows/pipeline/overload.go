package pipeline

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// ErrNotAdmittedInTime: Temporal did not answer a task's admission in time, because the
// caller's deadline passed, the server gave up waiting for the update (it is overloaded or no
// worker polls), or it refused the load. The workflow may have started all the same (the start
// and the update are one request, but the wait for the update's answer is not), and it then
// admits the task in full once a worker takes it; nothing is half-written, since the workflow's
// own activity records the task. A retry under the same task id (the same Idempotency-Key)
// reaches that workflow, so it answers the same task instead of creating a second one.
var ErrNotAdmittedInTime = errors.New("the task's admission was not answered in time")

// notAnsweredInTime reports whether an Update-With-Start failed for time or load, not for an
// answer: the SDK's timeout error (the caller's deadline, or the server's DeadlineExceeded or
// Canceled status), or a multi-operation failure one of whose operations the server could not
// run for time or load. Neither of these carries its cause where errors.As finds it.
func notAnsweredInTime(err error) bool {
	var timeout *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if errors.As(err, &timeout) || errors.Is(err, context.DeadlineExceeded) || overloaded(err) {
		return true
	}
	var multi *serviceerror.MultiOperationExecution
	if !errors.As(err, &multi) {
		return false
	}
	for _, op := range multi.OperationErrors() {
		if overloaded(op) {
			return true
		}
	}
	return false
}

// overloaded: a status the server answers when it cannot do the work now, not a refusal of it.
func overloaded(err error) bool {
	var (
		dl  *serviceerror.DeadlineExceeded
		rex *serviceerror.ResourceExhausted
		un  *serviceerror.Unavailable
	)
	return errors.As(err, &dl) || errors.As(err, &rex) || errors.As(err, &un)
}

// noWorkerPolling: a query the server could not hand to a worker, because none has polled the
// queue lately ("no poller seen for task queue recently, worker may be down"). A query of a
// closed workflow needs a worker to replay it; a worker whose slots are all busy does not poll.
func noWorkerPolling(err error) bool {
	var fp *serviceerror.FailedPrecondition
	return errors.As(err, &fp)
}
