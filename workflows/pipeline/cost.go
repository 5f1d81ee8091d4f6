package pipeline

import (
	"github.com/taskloom/taskloom/internal/pipeline"
)

// A task costs the fewest Temporal actions its guarantees allow (docs/pipelines.md "Examples", its
// "Cost per task" item):
//   - no TaskloomStatus upsert when the steps start: the attribute given at start (`pending`)
//     stays until the run ends and upserts success or failed;
//   - a sync_api step's activity also chooses the next step's providers through the worker's
//     health cache (the choice of the first step stays in the admission's local-activity batch),
//     and the last step's activity finishes the task (status, quota settlement);
//   - a pipeline of sync_api steps only has no max_execution_time timer (deadline.go).

// costFloor is what a run carries between steps to keep to that floor.
type costFloor struct {
	// next is the choice among step nextFor's candidates that the previous step's activity made.
	next    *pipeline.ChooseResult
	nextFor int
	// finished says the last step's activity finished the task.
	finished bool
	// tried are the providers the running step called so far (task_steps.providers_tried, which
	// the step's one write records).
	tried []string
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
