package entry

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// The client side of EntryTaskWorkflow: every start, signal, query, describe and wait the API, the
// console, the CLI and the worker's suspended-task monitor make about an entry task goes through
// Client (it implements the intake's intake.Workflows). Not workflow code.

// WorkflowID is the workflow ID of an entry task: the task id itself, entry- + 32 hex digits of
// sha256(idempotency key) (entry.TaskID), so the same key always finds the same execution.
func WorkflowID(taskID string) string { return taskID }

// Client talks to Temporal about entry tasks. (The stats and operator lists read Temporal
// visibility directly, as the console's read model: intake.Visibility.)
type Client struct {
	Temporal client.Client
	// TaskQueue is the configured TEMPORAL_TASK_QUEUE, which the worker polls for every subsystem.
	TaskQueue string
}

// NewClient returns the entry client over c, starting workflows on taskQueue.
func NewClient(c client.Client, taskQueue string) *Client {
	return &Client{Temporal: c, TaskQueue: taskQueue}
}

// StartOptions are the options of in's start: the task id as workflow ID, the search attributes
// the console and the stats read, and the ID policies that make a second start of the same task
// fail with "already started" — the conflict policy FAIL while it runs, REJECT_DUPLICATE after it
// closed. (The bench starts the same to measure what the intake adds.)
func StartOptions(taskQueue string, in entry.WorkflowInput) client.StartWorkflowOptions {
	env := in.Envelope
	summary, details := startMetadata(in)
	return client.StartWorkflowOptions{
		ID:                                       WorkflowID(env.TaskID),
		TaskQueue:                                taskQueue,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            summary,
		StaticDetails:                            details,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(entry.Kind),
			searchattr.Status.ValueSet(entry.StatusPending), searchattr.Key.ValueSet(env.Context.IdempotencyKey),
			searchattr.Channel.ValueSet(env.Payload.Telemetry.Channel)),
	}
}

// Start starts the EntryTaskWorkflow of in.Envelope's task and reports whether this call created
// it; false (and no error) means an execution of the task id exists already, running or closed.
// The workflow is started by its registered name, entry.WorkflowType.
func (c *Client) Start(ctx context.Context, in entry.WorkflowInput) (created bool, err error) {
	_, err = c.Temporal.ExecuteWorkflow(ctx, StartOptions(c.TaskQueue, in), entry.WorkflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("start %s: %w", in.Envelope.TaskID, err)
	}
	return true, nil
}

// Describe reports whether the task's workflow is running, or how it closed: "" when it is
// running, completed, or unknown to Temporal (never started, or past retention); otherwise the
// execution status's name (TERMINATED, TIMED_OUT, FAILED, CANCELED, …).
func (c *Client) Describe(ctx context.Context, taskID string) (running bool, closed string, err error) {
	d, err := c.Temporal.DescribeWorkflowExecution(ctx, WorkflowID(taskID), "")
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

// QueryStatus asks the task's workflow for its status (the entry.QueryStatus query). With no
// worker polling, a query waits until ctx ends.
func (c *Client) QueryStatus(ctx context.Context, taskID string) (*entry.TaskStatus, error) {
	v, err := c.Temporal.QueryWorkflow(ctx, WorkflowID(taskID), "", entry.QueryStatus)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", taskID, err)
	}
	var st entry.TaskStatus
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode status of %s: %w", taskID, err)
	}
	return &st, nil
}

// Wait blocks until the task's workflow has closed (or ctx ends) and returns how it ended: nil for
// success, the workflow's error otherwise.
func (c *Client) Wait(ctx context.Context, taskID string) error {
	return c.Temporal.GetWorkflow(ctx, WorkflowID(taskID), "").Get(ctx, nil)
}

// Signal sends the operator signal name (entry.SignalResume or entry.SignalDrop) with p to the
// task's workflow.
func (c *Client) Signal(ctx context.Context, taskID, name string, p entry.SignalPayload) error {
	if err := c.Temporal.SignalWorkflow(ctx, WorkflowID(taskID), "", name, p); err != nil {
		return fmt.Errorf("signal %s to %s: %w", name, taskID, err)
	}
	return nil
}

// startMetadata is the static summary and details of a task's execution.
func startMetadata(in entry.WorkflowInput) (summary, details string) {
	env := in.Envelope
	p := env.Payload
	version := pipeline.VersionLabel(p.WorkflowVersion)
	summary = explain.Summary("entry "+p.Telemetry.Channel+" task", "pipeline "+p.WorkflowID+"@"+version,
		"retries "+strconv.Itoa(env.Retry.Max), "key "+env.Context.IdempotencyKey)
	details = explain.Details(fmt.Sprintf("Entry task `%s` from %s (idempotency key `%s`): runs pipeline **%s** %s as a "+
		"child workflow, retries a failed run up to %d times, then suspends until an operator resumes or drops it. "+
		"Its current details say what it waits for.", env.TaskID, p.Telemetry.Channel, env.Context.IdempotencyKey,
		p.WorkflowID, version, env.Retry.Max),
		explain.Link{Name: "Console", Path: "/ui/console/entry"},
		explain.Link{Name: "API", Path: "GET /api/workflows/tasks/" + env.TaskID},
		explain.Link{Name: "Operators", Path: "GET /internal/tasks/" + env.TaskID})
	return summary, details
}

// Closure is how the task's execution ended when it ended from outside (terminated, timed out,
// canceled), with who and why; nil while it runs or when it ended by itself.
func (c *Client) Closure(ctx context.Context, taskID string) (*closure.Closure, error) {
	d, err := c.Temporal.DescribeWorkflowExecution(ctx, WorkflowID(taskID), "")
	return closure.Of(ctx, c.Temporal, d, err)
}
