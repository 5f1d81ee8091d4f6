package intake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/entry"
)

// queryTimeout bounds the live status query: with no worker polling, a query waits; past this
// the answer comes from workflow_runs instead.
const queryTimeout = 3 * time.Second

// Tasks answers status questions and carries operator actions. Status comes from a workflow query
// while the workflow runs and from workflow_runs after (or when no worker answers the query).
type Tasks struct {
	Runs     *Store
	Temporal client.Client
}

// Status returns the task's status; ErrNotFound when neither Temporal nor workflow_runs knows it.
// While Temporal is unreachable the answer comes from workflow_runs.
func (t *Tasks) Status(ctx context.Context, taskID string) (*entry.TaskStatus, error) {
	running, closed, derr := t.describe(ctx, taskID)
	if running {
		if st, err := t.query(ctx, taskID); err == nil {
			return st, nil
		}
	}
	run, err := t.Runs.Get(ctx, taskID)
	if errors.Is(err, entry.ErrNotFound) && derr != nil {
		return nil, derr // Temporal did not answer and Mongo has no record: say which failed
	}
	if err != nil {
		return nil, err
	}
	st := statusOfRun(run)
	if closed != "" && !entry.Terminal(st.Status) {
		// The execution ended without recording it (terminated or timed out by an operator).
		st.Status, st.LastError = entry.StatusFailed, "workflow "+closed
	}
	return st, nil
}

// describe reports whether the workflow is running, or how it closed ("" when running or
// unknown to Temporal, e.g. past retention).
func (t *Tasks) describe(ctx context.Context, taskID string) (running bool, closed string, err error) {
	d, err := t.Temporal.DescribeWorkflowExecution(ctx, taskID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("describe %s: %w", taskID, err)
	}
	switch s := d.GetWorkflowExecutionInfo().GetStatus(); s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return true, "", nil
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return false, "", nil
	default:
		return false, enums.WorkflowExecutionStatus_name[int32(s)], nil
	}
}

func (t *Tasks) query(ctx context.Context, taskID string) (*entry.TaskStatus, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := t.Temporal.QueryWorkflow(qctx, taskID, "", entry.QueryStatus)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", taskID, err)
	}
	var st entry.TaskStatus
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode status of %s: %w", taskID, err)
	}
	st.From = "workflow"
	return &st, nil
}

func statusOfRun(r *entry.Run) *entry.TaskStatus {
	st := entry.StatusOf(r)
	st.From = CollRuns
	return st
}

// Wait blocks until the task's workflow completes or ctx ends; done is false when ctx ended first.
// The SDK may give up its long poll slightly before ctx's deadline, so a failed wait counts as
// done only when the workflow is in fact closed.
func (t *Tasks) Wait(ctx context.Context, taskID string) (done bool, err error) {
	err = t.Temporal.GetWorkflow(ctx, taskID, "").Get(ctx, nil)
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryTimeout)
	defer cancel()
	if running, _, derr := t.describe(dctx, taskID); derr == nil && running {
		return false, nil
	}
	return true, fmt.Errorf("wait for %s: %w", taskID, err)
}

// ErrNotSuspended: resume/drop asked of a task in a state that does not take it (HTTP 409).
var ErrNotSuspended = errors.New("task is not waiting for an operator")

// Resume signals a suspended task to run again with a fresh retry budget.
func (t *Tasks) Resume(ctx context.Context, taskID string, p entry.SignalPayload) (*entry.TaskStatus, error) {
	return t.signal(ctx, taskID, entry.SignalResume, p, entry.StatusSuspended)
}

// Drop signals a suspended or retrying task to end as dropped.
func (t *Tasks) Drop(ctx context.Context, taskID string, p entry.SignalPayload) (*entry.TaskStatus, error) {
	return t.signal(ctx, taskID, entry.SignalDrop, p, entry.StatusSuspended, entry.StatusRetrying)
}

func (t *Tasks) signal(ctx context.Context, taskID, name string, p entry.SignalPayload, allowed ...string) (*entry.TaskStatus, error) {
	st, err := t.Status(ctx, taskID)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, a := range allowed {
		ok = ok || st.Status == a
	}
	if !ok {
		return st, fmt.Errorf("%s task %s in status %s: %w", name, taskID, st.Status, ErrNotSuspended)
	}
	if err := t.Temporal.SignalWorkflow(ctx, taskID, "", name, p); err != nil {
		return nil, fmt.Errorf("signal %s to %s: %w", name, taskID, err)
	}
	return st, nil
}
