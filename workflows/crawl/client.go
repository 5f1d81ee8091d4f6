package crawl

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/searchattr"
)

// Client-side helpers: how callers start and signal CrawlTaskWorkflow. They
// run outside workflows (API, starter, consumer) and are not workflow code.

// Register registers the workflow and its activities on w, with the bare
// names that runs started before versionPrefixedNames schedule.
func Register(w sdkworker.Registry, acts *crawlact.Activities) {
	w.RegisterWorkflow(CrawlTaskWorkflow)
	w.RegisterActivity(acts)
	w.RegisterActivity(&legacyActivities{acts: acts})
}

// StartOptions are the options every start of a task's workflow uses. An
// original task runs once: its ID is never reused, because a second run
// would count into the same task_progress hash.
func StartOptions(originalTaskID int64, taskQueue string) client.StartWorkflowOptions {
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
	run, err := c.ExecuteWorkflow(ctx, StartOptions(in.OriginalTaskID, taskQueue), CrawlTaskWorkflow, in)
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

// TaskAnnounced starts the task's workflow (without a crawler) unless it
// exists; a running workflow is left as it is and a finished one is not
// restarted.
func (n *Notifier) TaskAnnounced(ctx context.Context, originalTaskID int64) error {
	opts := StartOptions(originalTaskID, n.TaskQueue)
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
	opts := StartOptions(c.OriginalTaskID, n.TaskQueue)
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
