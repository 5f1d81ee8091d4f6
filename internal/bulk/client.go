package bulk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/searchattr"
)

// The client side of every bulk operation, its one face to Temporal: the API, the console and
// the CLI start operations and read their progress through Plan. Not workflow code.

// Plan is one operation as its callers run it: its Op, Temporal, and from its subsystem the
// store query that counts a filter's tasks and the rule that narrows a requested filter.
type Plan[F, P any, O Outcome] struct {
	Op        Op
	Temporal  client.Client
	TaskQueue string
	// Count counts the tasks f selects and lists the ids of up to sample of them.
	Count func(ctx context.Context, f F, sample int) (n int64, ids []string, err error)
	// Apply is the filter an operation requested at now works on: never tasks that qualify
	// after it started, and whatever else its subsystem bounds.
	Apply func(requested F, now time.Time) F
}

// DryRun is what an operation on requested would work on now: the applied filter, how many tasks
// it selects, and up to sample of their ids. It changes nothing.
func (pl *Plan[F, P, O]) DryRun(ctx context.Context, requested F, sample int) (applied F, n int64, ids []string, err error) {
	applied = pl.Apply(requested, time.Now().UTC().Truncate(time.Millisecond))
	n, ids, err = pl.Count(ctx, applied, sample)
	return applied, n, ids, err
}

// Start starts operation id on requested at rate tasks a second with params, unless it exists: a
// repeated request, also after the operation finished, is answered with it (started false). A
// request with another filter under the same id fails with ErrConflict. total is the
// operation's dry-run count when it started.
func (pl *Plan[F, P, O]) Start(ctx context.Context, id string, requested F, params P, rate int) (started bool, total int64, err error) {
	if p, err := pl.Progress(ctx, id); err == nil {
		return false, p.Total, pl.same(p, requested)
	}
	// The count is the progress's total; its sample is not shown (a limit of 0 would list all).
	applied, n, _, err := pl.DryRun(ctx, requested, 1)
	if err != nil {
		return false, 0, err
	}
	in := Input[F, P, O]{Op: pl.Op.Name, ID: id, Requested: requested, Filter: applied, Params: params, BatchSize: rate,
		Interval: DefaultInterval, Progress: Progress[F, O]{Total: n}}
	wid := pl.Op.WorkflowID(id)
	_, err = pl.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       wid,
		TaskQueue:                                pl.TaskQueue,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(pl.Op.Kind),
			searchattr.Status.ValueSet(pl.Op.Running)),
	}, pl.Op.Workflow, in)
	var dup *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &dup) {
		if err != nil {
			return false, 0, fmt.Errorf("start %s: %w", wid, err)
		}
		return true, n, nil
	}
	// A concurrent request started it between the progress query and the start.
	p, err := pl.Progress(ctx, id)
	if err != nil {
		return false, 0, err
	}
	return false, p.Total, pl.same(p, requested)
}

// same is nil when p's operation was requested with requested, ErrConflict otherwise.
func (pl *Plan[F, P, O]) same(p *Progress[F, O], requested F) error {
	if !SameFilter(p.Requested, requested) {
		return fmt.Errorf("%s %s: %w", pl.Op.Noun, p.ID, ErrConflict)
	}
	return nil
}

// Progress queries operation id's progress, running or closed; ErrNotFound when there is no
// such operation.
func (pl *Plan[F, P, O]) Progress(ctx context.Context, id string) (*Progress[F, O], error) {
	v, err := pl.Temporal.QueryWorkflow(ctx, pl.Op.WorkflowID(id), "", QueryProgress)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%s %s: %w", pl.Op.Noun, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s: %w", pl.Op.Noun, id, err)
	}
	var p Progress[F, O]
	if err := v.Get(&p); err != nil {
		return nil, fmt.Errorf("decode progress of %s %s: %w", pl.Op.Noun, id, err)
	}
	return &p, nil
}
