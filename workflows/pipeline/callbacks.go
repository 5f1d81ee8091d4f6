package pipeline

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// UpdateStepCallback delivers a verified SCF callback (pipeline.CallbackDelivery) to the workflow.
// Its validator is the whole acceptance rule: the step must exist (else ErrTypeStepNotFound), be
// the step the pipeline is on (ErrTypeCallbackStale for one it has left), be an scf step that is
// waiting (ErrTypeStepNotWaiting), and not have had its callback (ErrTypeCallbackDelivered).
const UpdateStepCallback = "pipeline-step-callback"

// callbacks is the SCF callback state: which step waits, and the callbacks delivered.
type callbacks struct {
	waiting   int // the step index open for its callback, or -1
	delivered map[int]*pipeline.CallbackDelivery
}

func (c *callbacks) open(i int) { c.waiting = i }
func (c *callbacks) close()     { c.waiting = -1 }

func (c *callbacks) deliveredFor(i int) *pipeline.CallbackDelivery { return c.delivered[i] }

func (r *run) registerCallbacks(ctx workflow.Context) error {
	r.scf = callbacks{waiting: -1, delivered: map[int]*pipeline.CallbackDelivery{}}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateStepCallback,
		func(_ workflow.Context, cb pipeline.CallbackDelivery) error {
			r.scf.delivered[cb.StepIndex] = &cb
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: r.validateCallback})
	if err != nil {
		return fmt.Errorf("register %s update: %w", UpdateStepCallback, err)
	}
	return nil
}

// validateCallback refuses every callback but the first one for the step that waits.
func (r *run) validateCallback(cb pipeline.CallbackDelivery) error {
	i := cb.StepIndex
	refuse := func(sentinel error, format string, args ...any) error {
		return pipeline.RefuseAs(sentinel, fmt.Sprintf("step %d of task %s: ", i, r.in.TaskID)+fmt.Sprintf(format, args...))
	}
	switch {
	case r.adm.result == nil && r.adm.refusal == nil:
		return refuse(pipeline.ErrStepNotWaiting, "the task is not admitted yet")
	case i < 0 || i >= len(r.schema.Steps):
		return refuse(pipeline.ErrStepNotFound, "no such step (the pipeline has %d)", len(r.schema.Steps))
	case r.scf.delivered[i] != nil:
		return refuse(pipeline.ErrCallbackDelivered, "the callback was delivered already")
	case i < r.state.CurrentStep || r.state.StepStatus[i] == pipeline.StatusSuccess || r.state.StepStatus[i] == pipeline.StatusFailed:
		return refuse(pipeline.ErrCallbackStale, "the pipeline has left this step (it is %s)", r.state.StepStatus[i])
	case r.scf.waiting != i:
		return refuse(pipeline.ErrStepNotWaiting, "the step is not waiting for a callback (type %s, status %s)",
			r.schema.Steps[i].Type, r.state.StepStatus[i])
	}
	return nil
}
