package intake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
)

// Workflows is how the intake talks to Temporal about EntryTaskWorkflow: workflows/entry's Client
// implements it, and the API, the worker and the CLI hand that in (internal packages do not import
// workflows).
type Workflows interface {
	// Start starts in.Envelope's EntryTaskWorkflow; created is false (with no error) when an
	// execution of its task id exists already, running or closed.
	Start(ctx context.Context, in entry.WorkflowInput) (created bool, err error)
	// Describe reports whether the task's workflow runs, or how it closed ("" when it runs,
	// completed, or is unknown to Temporal, e.g. past retention).
	Describe(ctx context.Context, taskID string) (running bool, closed string, err error)
	// Closure is how the task's execution ended when it ended from outside (terminated, timed
	// out, canceled), with who and why; nil otherwise.
	Closure(ctx context.Context, taskID string) (*closure.Closure, error)
	// QueryStatus asks the running workflow for the task's status.
	QueryStatus(ctx context.Context, taskID string) (*entry.TaskStatus, error)
	// Wait blocks until the workflow closes or ctx ends, and returns the workflow's error.
	Wait(ctx context.Context, taskID string) error
	// Signal sends an operator signal (entry.SignalResume, entry.SignalDrop).
	Signal(ctx context.Context, taskID, name string, p entry.SignalPayload) error
}

// Visibility is what the stats, the operator lists and the monitor read from Temporal: visibility
// counts and lists, the console's read model rather than any execution's face. client.Client
// satisfies it.
type Visibility interface {
	CountWorkflow(ctx context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error)
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// queryTimeout bounds the live status query: with no worker polling, a query waits; past this
// the answer comes from workflow_runs instead.
const queryTimeout = 3 * time.Second

// Tasks answers status questions and carries operator actions. Status comes from a workflow query
// while the workflow runs and from workflow_runs after (or when no worker answers the query).
type Tasks struct {
	Runs       *entrydb.Store
	Workflows  Workflows
	Visibility Visibility
}

// Status returns the task's status; ErrNotFound when neither Temporal nor workflow_runs knows it.
// While Temporal is unreachable the answer comes from workflow_runs.
func (t *Tasks) Status(ctx context.Context, taskID string) (*entry.TaskStatus, error) {
	return t.status(ctx, taskID, nil)
}

// MayRead decides whether a caller may read a task submitted by owner (entry.Context.Owner).
type MayRead func(owner string) bool

// StatusFor is Status for a caller that may read only some tasks: a task whose recorded owner
// may refuses is ErrNotFound, like one not recorded yet, so the caller cannot tell another's
// task from none. The owner is on the workflow_runs document, which the workflow's first write
// records: that read comes first, and Status reuses it once the task has closed (while it runs,
// the live query answers and the read is the one command added). A nil may reads every task.
func (t *Tasks) StatusFor(ctx context.Context, taskID string, may MayRead) (*entry.TaskStatus, error) {
	if may == nil {
		return t.Status(ctx, taskID)
	}
	run, err := t.Runs.Get(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if !may(run.Owner) {
		return nil, fmt.Errorf("task %s of another owner: %w", taskID, entry.ErrNotFound)
	}
	return t.status(ctx, taskID, run)
}

// status answers from a live query while the task runs, else from its workflow_runs document:
// run when the caller has read it, or a read here.
func (t *Tasks) status(ctx context.Context, taskID string, run *entry.Run) (*entry.TaskStatus, error) {
	running, closed, derr := t.Workflows.Describe(ctx, taskID)
	if running {
		if st, err := t.query(ctx, taskID); err == nil {
			return st, nil
		}
	}
	if run == nil {
		var err error
		run, err = t.Runs.Get(ctx, taskID)
		if errors.Is(err, entry.ErrNotFound) && derr != nil {
			return nil, derr // Temporal did not answer and Mongo has no record: say which failed
		}
		if err != nil {
			return nil, err
		}
	}
	st := statusOfRun(run)
	if closed != "" && !entry.Terminal(st.Status) {
		return t.follow(ctx, st, closed)
	}
	return st, nil
}

// follow makes the record of a task whose execution closed without recording its end follow
// Temporal (reconcile on read): terminated from outside (terminate, timeout, cancel) becomes
// terminated with who and why, in workflow_runs with a guarded write; any other close (a failed
// workflow) answers failed.
func (t *Tasks) follow(ctx context.Context, st *entry.TaskStatus, closed string) (*entry.TaskStatus, error) {
	cl, err := t.Workflows.Closure(ctx, st.TaskID)
	if err != nil || cl == nil {
		st.Status, st.LastError = entry.StatusFailed, "workflow "+closed
		return st, nil
	}
	if _, err := t.Runs.MarkTerminated(ctx, st.TaskID, cl.Text(), cl.At); err != nil {
		return nil, err
	}
	st.Status, st.LastError = entry.StatusTerminated, cl.Text()
	return st, nil
}

func (t *Tasks) query(ctx context.Context, taskID string) (*entry.TaskStatus, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	st, err := t.Workflows.QueryStatus(qctx, taskID)
	if err != nil {
		return nil, err
	}
	st.From = "workflow"
	return st, nil
}

func statusOfRun(r *entry.Run) *entry.TaskStatus {
	st := entry.StatusOf(r)
	st.From = entrydb.CollRuns
	return st
}

// Wait blocks until the task's workflow completes or ctx ends; done is false when ctx ended first.
// The SDK may give up its long poll slightly before ctx's deadline, so a failed wait counts as
// done only when the workflow is in fact closed.
func (t *Tasks) Wait(ctx context.Context, taskID string) (done bool, err error) {
	err = t.Workflows.Wait(ctx, taskID)
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryTimeout)
	defer cancel()
	if running, _, derr := t.Workflows.Describe(dctx, taskID); derr == nil && running {
		return false, nil
	}
	return true, fmt.Errorf("wait for %s: %w", taskID, err)
}

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
		return st, fmt.Errorf("%s task %s in status %s: %w", name, taskID, st.Status, entry.ErrNotSuspended)
	}
	if err := t.Workflows.Signal(ctx, taskID, name, p); err != nil {
		return nil, err
	}
	return st, nil
}
