// Package closure reads how a workflow execution ended when it ended from outside — terminated
// (temporal workflow terminate, the Web UI), timed out (execution or run timeout) or canceled —
// so that a task's domain record, which its workflow could no longer write, can follow
// Temporal: the record's status becomes terminated, with who and why where Temporal has them.
//
// The subsystems' Temporal faces (workflows/<x>/client.go) describe the execution and hand the
// answer to Of; the API (reconcile on read) and the worker's reconciler write the result with a
// guarded update that only turns a non-terminal status into terminated.
package closure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Status is the domain status a task gets when its execution ended from outside.
const Status = "terminated"

// Closure is how an execution ended from outside.
type Closure struct {
	// How is Temporal's close status: Terminated, TimedOut or Canceled.
	How string `json:"how"`
	// By is the identity that terminated it (the CLI's user@host, the Web UI's user), when known.
	By string `json:"by,omitempty"`
	// Reason is the terminate request's reason, when given.
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// Text is the closure as one sentence for a record's error or failure reason:
// "workflow terminated by alice@ops: bad input", "workflow timed out".
func (c *Closure) Text() string {
	var b strings.Builder
	b.WriteString("workflow ")
	switch c.How {
	case "TimedOut":
		b.WriteString("timed out")
	case "Canceled":
		b.WriteString("canceled")
	default:
		b.WriteString("terminated")
	}
	if c.By != "" {
		b.WriteString(" by " + c.By)
	}
	if c.Reason != "" {
		b.WriteString(": " + c.Reason)
	}
	return b.String()
}

// outside reports whether an execution status is an end the workflow did not record itself.
func outside(s enumspb.WorkflowExecutionStatus) bool {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
		enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return true
	}
	return false
}

// Of is the closure of the execution d describes (the answer, with its error, of
// DescribeWorkflowExecution for the task's workflow ID, so the latest run): nil when it runs,
// completed, failed or continued as new, or when Temporal does not know it (never started, past
// retention). For an execution ended from outside it reads the close event (one call) for who
// and why.
func Of(ctx context.Context, c client.Client, d *workflowservice.DescribeWorkflowExecutionResponse, err error) (*Closure, error) {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe execution: %w", err)
	}
	info := d.GetWorkflowExecutionInfo()
	if !outside(info.GetStatus()) {
		return nil, nil
	}
	cl := &Closure{How: closeStatusName(info.GetStatus()), At: info.GetCloseTime().AsTime().UTC()}
	exec := info.GetExecution()
	it := c.GetWorkflowHistory(ctx, exec.GetWorkflowId(), exec.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return cl, nil // who and why are a courtesy: the status alone is the fix
		}
		fromEvent(cl, ev)
	}
	return cl, nil
}

// closeStatusName is s in visibility's words (ExecutionStatus = 'TimedOut').
func closeStatusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "TimedOut"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "Canceled"
	}
	return "Terminated"
}

func fromEvent(cl *Closure, ev *historypb.HistoryEvent) {
	if a := ev.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
		cl.By, cl.Reason = a.GetIdentity(), a.GetReason()
	}
}
