package pipeline

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// A task costs the fewest Temporal actions its guarantees allow (README "Pipelines", "Cost per
// task"):
//   - no TaskloomStatus upsert when the steps start: the attribute given at start (`pending`)
//     stays until the run ends and upserts success or failed;
//   - a sync_api step's activity also chooses the next step's providers through the worker's
//     health cache (the choice of the first step stays in the admission's local-activity batch),
//     and the last step's activity finishes the task (status, quota settlement);
//   - a pipeline of sync_api steps only has no max_execution_time timer: each activity's
//     schedule-to-close timeout is bounded by the time left, and a step that ends past the
//     deadline fails the task with the max_execution_time reason. Pipelines with an async_api or
//     scf step keep the timer (a wait for a poll or a callback is not an activity).

// costFloor is what a run carries between steps to keep to that floor.
type costFloor struct {
	// deadline is when max_execution_time runs out, for a run without its timer (zero: no bound).
	deadline time.Time
	// next is the choice among step nextFor's candidates that the previous step's activity made.
	next    *pipeline.ChooseResult
	nextFor int
	// finished says the last step's activity finished the task.
	finished bool
	// tried are the providers the running step called so far (task_steps.providers_tried, which
	// the step's one write records).
	tried []string
}

// startCostFloor sets the deadline of a timerless run when the steps start.
func (r *run) startCostFloor(ctx workflow.Context) {
	if r.schema.MaxExecutionTime > 0 && r.allSync() {
		r.cost.deadline = workflow.Now(ctx).Add(time.Duration(r.schema.MaxExecutionTime) * time.Second)
	}
}

func (r *run) allSync() bool {
	for _, st := range r.schema.Steps {
		if st.Type != pipeline.StepSyncAPI {
			return false
		}
	}
	return true
}

// timerless says the run bounds its activities by the deadline instead of a max_execution_time timer.
func (r *run) timerless() bool { return r.allSync() }

// exceeded is the failure of step i once max_execution_time ran out.
func (r *run) exceeded(i int, provider string) *stepFailure {
	return &stepFailure{index: i, provider: provider, msg: fmt.Sprintf("pipeline exceeded max_execution_time of %ds", r.schema.MaxExecutionTime)}
}

// pastDeadline says max_execution_time ran out (a run with a deadline only).
func (r *run) pastDeadline(ctx workflow.Context) bool {
	return !r.cost.deadline.IsZero() && !workflow.Now(ctx).Before(r.cost.deadline)
}

// bound shortens an activity's timeouts to the time max_execution_time leaves; ok is false when
// none is left.
func (r *run) bound(ctx workflow.Context, opts workflow.ActivityOptions) (workflow.ActivityOptions, bool) {
	if r.cost.deadline.IsZero() {
		return opts, true
	}
	left := r.cost.deadline.Sub(workflow.Now(ctx))
	if left <= 0 {
		return opts, false
	}
	opts.ScheduleToCloseTimeout = min(opts.ScheduleToCloseTimeout, left)
	opts.StartToCloseTimeout = min(opts.StartToCloseTimeout, left)
	return opts, true
}

// syncStep is what step i's sync activity does besides its call.
func (r *run) syncStep(i int) *pipeline.SyncStep {
	s := &pipeline.SyncStep{}
	if i+1 < len(r.schema.Steps) {
		if next := r.schema.Steps[i+1]; next.Type == pipeline.StepSyncAPI || next.Type == pipeline.StepAsyncAPI {
			s.NextCandidates = next.Candidates()
		}
	} else {
		s.Finish = &pipeline.FinishTaskRequest{TaskID: r.in.TaskID, UserID: r.in.UserID, FeatureID: r.in.FeatureID, Status: pipeline.StatusSuccess}
	}
	return s
}

// takeChoice returns the choice the previous step's activity made for step i, once.
func (r *run) takeChoice(i int) *pipeline.ChooseResult {
	c := r.cost.next
	if c == nil || r.cost.nextFor != i {
		return nil
	}
	r.cost.next = nil
	return c
}
