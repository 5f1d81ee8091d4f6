package pipeline

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	domain "github.com/taskloom/taskloom/internal/pipeline"
)

// UpdateStepCallback delivers a verified SCF callback (domain.CallbackDelivery) to the workflow.
// Its validator is the whole acceptance rule: the step must exist (else ErrTypeStepNotFound), be
// the step the pipeline is on (ErrTypeCallbackStale for one it has left), be an scf step that is
// waiting (ErrTypeStepNotWaiting), and not have had its callback (ErrTypeCallbackDelivered).
const UpdateStepCallback = "pipeline-step-callback"

// callbacks is the SCF callback state: which step waits, and the callbacks delivered.
type callbacks struct {
	waiting   int // the step index open for its callback, or -1
	delivered map[int]*domain.CallbackDelivery
}

func (c *callbacks) open(i int) { c.waiting = i }
func (c *callbacks) close()     { c.waiting = -1 }

func (c *callbacks) deliveredFor(i int) *domain.CallbackDelivery { return c.delivered[i] }

func (r *run) registerCallbacks(ctx workflow.Context) error {
	r.scf = callbacks{waiting: -1, delivered: map[int]*domain.CallbackDelivery{}}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateStepCallback,
		func(_ workflow.Context, cb domain.CallbackDelivery) error {
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
func (r *run) validateCallback(cb domain.CallbackDelivery) error {
	i := cb.StepIndex
	refuse := func(typ, format string, args ...any) error {
		return temporal.NewApplicationError(fmt.Sprintf("step %d of task %s: ", i, r.in.TaskID)+fmt.Sprintf(format, args...), typ)
	}
	switch {
	case r.adm.result == nil && r.adm.refusal == nil:
		return refuse(domain.ErrTypeStepNotWaiting, "the task is not admitted yet")
	case i < 0 || i >= len(r.schema.Steps):
		return refuse(domain.ErrTypeStepNotFound, "no such step (the pipeline has %d)", len(r.schema.Steps))
	case r.scf.delivered[i] != nil:
		return refuse(domain.ErrTypeCallbackDelivered, "the callback was delivered already")
	case i < r.state.CurrentStep || r.state.StepStatus[i] == domain.StatusSuccess || r.state.StepStatus[i] == domain.StatusFailed:
		return refuse(domain.ErrTypeCallbackStale, "the pipeline has left this step (it is %s)", r.state.StepStatus[i])
	case r.scf.waiting != i:
		return refuse(domain.ErrTypeStepNotWaiting, "the step is not waiting for a callback (type %s, status %s)",
			r.schema.Steps[i].Type, r.state.StepStatus[i])
	}
	return nil
}
