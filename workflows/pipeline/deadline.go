package pipeline

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// max_execution_time bounds a run from the moment its steps start, and it is the deadline, not
// the running step's own timeout, that ends the run, whatever the step waits for:
//   - every activity a step schedules (a call, a submit, a poll, an invocation) gets timeouts that
//     end by the deadline (bound), so no vendor call outlives it, and a step that fails once it
//     has passed fails with the max_execution_time reason;
//   - a pipeline with an async_api or scf step also waits on a max_execution_time timer beside its
//     steps (awaitSteps), which stops the running step at the deadline: a wait between polls or
//     for a callback is not an activity. A pipeline of sync_api steps only needs no timer, which
//     saves its actions (cost.go).
//
// A vendor job the deadline leaves running is named in the failure; its vendor_task_id stays on
// the step row for an operator to find at the vendor.

// startDeadline sets the run's deadline when its steps start (none without max_execution_time).
func (r *run) startDeadline(ctx workflow.Context) {
	if r.schema.MaxExecutionTime > 0 {
		r.deadline = workflow.Now(ctx).Add(time.Duration(r.schema.MaxExecutionTime) * time.Second)
	}
}

// timerless says the run bounds its activities by the deadline and sets no max_execution_time
// timer: a pipeline of sync_api steps only.
func (r *run) timerless() bool {
	for _, st := range r.schema.Steps {
		if st.Type != pipeline.StepSyncAPI {
			return false
		}
	}
	return true
}

// exceeded is the failure of step i once max_execution_time ran out; provider is the one the step
// was calling, if any. A submitted job of the step is named, with its last known status.
func (r *run) exceeded(i int, provider string) *stepFailure {
	msg := fmt.Sprintf("pipeline exceeded max_execution_time of %ds", r.schema.MaxExecutionTime)
	if j := r.job; j != nil && j.step == i {
		provider = j.provider
		msg += fmt.Sprintf("; vendor task %s was still %q", j.sub.VendorTaskID, j.status)
	}
	return &stepFailure{index: i, provider: provider, msg: msg}
}

// pastDeadline says max_execution_time ran out (a run with a deadline only).
func (r *run) pastDeadline(ctx workflow.Context) bool {
	return !r.deadline.IsZero() && !workflow.Now(ctx).Before(r.deadline)
}

// bound shortens an activity's timeouts to the time max_execution_time leaves; ok is false when
// none is left.
func (r *run) bound(ctx workflow.Context, opts workflow.ActivityOptions) (workflow.ActivityOptions, bool) {
	if r.deadline.IsZero() {
		return opts, true
	}
	left := r.deadline.Sub(workflow.Now(ctx))
	if left <= 0 {
		return opts, false
	}
	opts.ScheduleToCloseTimeout = min(opts.ScheduleToCloseTimeout, left)
	opts.StartToCloseTimeout = min(opts.StartToCloseTimeout, left)
	return opts, true
}

// awaitSteps waits for the steps to finish. It returns nil when they did, or the failure that
// stopped them: max_execution_time ran out (its timer fired first), or the workflow was cancelled
// (cancelled is then true). The failure is built when the steps are stopped, before they unwind,
// so it still names the running step's vendor job.
func (r *run) awaitSteps(ctx workflow.Context, done func() bool) (stopped *stepFailure, cancelled bool) {
	step := func() int { return max(r.state.CurrentStep, 0) }
	maxSecs := r.schema.MaxExecutionTime
	if maxSecs <= 0 || r.timerless() {
		if err := workflow.Await(ctx, done); err != nil {
			return &stepFailure{index: step(), msg: reasonCancelled}, true
		}
		return nil, false
	}
	finished, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: r.deadline.Sub(workflow.Now(ctx)),
		TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("max_execution_time %ds", maxSecs)}}, done)
	switch {
	case err != nil:
		return &stepFailure{index: step(), msg: reasonCancelled}, true
	case !finished:
		return r.exceeded(step(), ""), false
	}
	return nil, false
}
