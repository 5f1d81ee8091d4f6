package crawl

// The client side of CrawlTaskWorkflow: its ID, how the API, the CLI and the Kafka consumers
// start it and signal it. This is the only place outside the workflow that talks to Temporal
// about crawl tasks; it runs outside workflows and is not workflow code.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// startOptions are the options every start of a task's workflow uses. An
// original task runs once: its ID is never reused, because a second run
// would count into the same task_progress hash.
func startOptions(originalTaskID int64, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       WorkflowID(originalTaskID),
		TaskQueue:                                taskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(crawl.Running), searchattr.OriginalTaskID.ValueSet(originalTaskID)),
	}
}

// Start starts a task's workflow; an existing one (running or finished) is
// a *serviceerror.WorkflowExecutionAlreadyStarted.
func Start(ctx context.Context, c client.Client, taskQueue string, in Input) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, startOptions(in.OriginalTaskID, taskQueue), CrawlTaskWorkflow, in)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", WorkflowID(in.OriginalTaskID), err)
	}
	return run, nil
}

// Notifier connects the consumers to the tasks' workflows: a TASK_INIT
// ensures the workflow exists, completion is signalled with SignalWithStart,
// so a task whose crawler ran outside taskloom still gets a workflow, a
// crawl_tasks record and a completion deadline. It implements the
// consumers' crawl.WorkflowNotifier.
type Notifier struct {
	Client             client.Client
	TaskQueue          string
	CompletionDeadline time.Duration
}

var _ crawl.WorkflowNotifier = (*Notifier)(nil)

// TaskAnnounced starts the task's workflow (without a crawler) unless it
// exists; a running workflow is left as it is and a finished one is not
// restarted.
func (n *Notifier) TaskAnnounced(ctx context.Context, originalTaskID int64) error {
	opts := startOptions(originalTaskID, n.TaskQueue)
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
	in := Input{OriginalTaskID: originalTaskID, Source: crawl.SourceKafka, CompletionDeadline: n.CompletionDeadline}
	_, err := n.Client.ExecuteWorkflow(ctx, opts, CrawlTaskWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("ensure %s: %w", opts.ID, err)
	}
	return nil
}

// TaskCompleted signals (or starts and signals) the task's workflow. A
// workflow that already finished (say, failed at its deadline) is not
// restarted: the late completion is logged by the caller's record only.
func (n *Notifier) TaskCompleted(ctx context.Context, c crawl.Completion) error {
	opts := startOptions(c.OriginalTaskID, n.TaskQueue)
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
	in := Input{OriginalTaskID: c.OriginalTaskID, Source: crawl.SourceKafka, CompletionDeadline: n.CompletionDeadline}
	sig := CompletedSignal{TotalTweets: c.Progress.TotalTweets, ProcessedTweets: c.Progress.ProcessedTweets,
		DuplicateTweets: c.Progress.DuplicateTweets, DeadLetteredRecords: c.Progress.DeadLetteredRecords,
		CompletedBy: c.CompletedBy.String()}
	_, err := n.Client.SignalWithStartWorkflow(ctx, opts.ID, SignalCompleted, sig, opts, CrawlTaskWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("signal %s to %s: %w", SignalCompleted, opts.ID, err)
	}
	return nil
}

// WorkflowID is the deterministic ID of a task's workflow.
func WorkflowID(originalTaskID int64) string {
	return "crawl-" + strconv.FormatInt(originalTaskID, 10)
}

// OriginalTaskID is the original_task_id a task's workflow ID names (WorkflowID's inverse).
func OriginalTaskID(workflowID string) (int64, bool) {
	s, ok := strings.CutPrefix(workflowID, "crawl-")
	id, err := strconv.ParseInt(s, 10, 64)
	return id, ok && err == nil && id > 0
}

// Closure is how the task's execution ended when it ended from outside (terminated, timed out,
// canceled), with who and why; nil while it runs or when it ended by itself.
func Closure(ctx context.Context, c client.Client, originalTaskID int64) (*closure.Closure, error) {
	d, err := c.DescribeWorkflowExecution(ctx, WorkflowID(originalTaskID), "")
	return closure.Of(ctx, c, d, err)
}
