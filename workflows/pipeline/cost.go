package pipeline

import (
	"github.com/taskloom/taskloom/internal/pipeline"
)

// A task costs the fewest Temporal actions its guarantees allow:
//   - no TaskloomStatus upsert when the steps start: the attribute given at start (`pending`)
//     stays until the run ends and upserts success or failed;
//   - a sync_api step's activity also chooses the next step's providers through the worker's
//     health cache (the choice of the first step stays in the admission's local-activity batch),
//     and the last step's activity records the task's end (r.taskEnd, the one end the workflow
//     would record itself: see end in workflow.go);
//   - a pipeline of sync_api steps only has no max_execution_time timer (deadline.go).
//
// The state that keeps to that floor is read and written in this file only; steps.go calls the
// methods below.

// costFloor is what a run carries between steps to keep to that floor.
type costFloor struct {
	// next is the choice among step nextFor's candidates that the previous step's activity made.
	next    *pipeline.ChooseResult
	nextFor int
	// ended says the last step's activity recorded the task's end.
	ended bool
	// tried are the providers the running step called so far (task_steps.providers_tried, which
	// the step's one write records).
	tried []string
}

// beginStep starts a step: no provider tried yet.
func (c *costFloor) beginStep() { c.tried = nil }

// called notes that the running step called provider.
func (c *costFloor) called(provider string) { c.tried = append(c.tried, provider) }

// endRecorded says the task's end is recorded already, by the last sync step's activity.
func (c *costFloor) endRecorded() bool { return c.ended }

// took keeps what step i's sync activity did besides its call: the next step's choice, and
// whether it recorded the task's end.
func (c *costFloor) took(i int, req pipeline.CallRequest, res pipeline.CallResult) {
	c.next, c.nextFor = res.Next, i+1
	c.ended = req.Sync.Finish != nil
}

// syncRequest is step i's sync activity against provider: the call, the providers the step tried
// before it, and what the activity does besides — choose the next step's providers or, on the
// last step, record the task's end.
func (r *run) syncRequest(i int, provider string) pipeline.CallRequest {
	req := r.callRequest(i, provider)
	req.Tried = append([]string(nil), r.cost.tried...)
	req.Sync = &pipeline.SyncStep{}
	if i+1 < len(r.schema.Steps) {
		if next := r.schema.Steps[i+1]; next.Type == pipeline.StepSyncAPI || next.Type == pipeline.StepAsyncAPI {
			req.Sync.NextCandidates = next.Candidates()
		}
	} else {
		req.Sync.Finish = r.taskEnd(nil)
	}
	return req
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
