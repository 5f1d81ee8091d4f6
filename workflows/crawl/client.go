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
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/waiting"
)

// startOptions are the options every start of a task's workflow uses. An
// original task runs once: its ID is never reused, because a second run
// would count into the same task_progress hash.
func startOptions(in Input, taskQueue string) client.StartWorkflowOptions {
	originalTaskID := in.OriginalTaskID
	id := strconv.FormatInt(originalTaskID, 10)
	what := "runs the crawler (timeout " + in.CrawlerTimeout.String() + "), then waits"
	if in.Source == crawl.SourceKafka {
		what = "the crawler ran elsewhere; waits"
	}
	return client.StartWorkflowOptions{
		ID:        WorkflowID(originalTaskID),
		TaskQueue: taskQueue,
		StaticSummary: explain.Summary("crawl task "+id, "source "+in.Source,
			"completion deadline "+in.CompletionDeadline.String()),
		StaticDetails: explain.Details(fmt.Sprintf("Crawl task `%s`: %s up to %s for every tweet to be processed "+
			"(processed_tweets = total_tweets in `task_progress:%s`), then records Completed or Failed in crawl_tasks.",
			id, what, in.CompletionDeadline, id),
			explain.Link{Name: "Console", Path: "/ui/console/crawl"},
			explain.Link{Name: "API", Path: "GET /api/v1/crawl-tasks/" + id}),
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(Kind),
			searchattr.Status.ValueSet(crawl.SearchStatus(crawl.Running)), searchattr.OriginalTaskID.ValueSet(originalTaskID)),
	}
}

// Start starts a task's workflow; an existing one (running or finished) is
// a *serviceerror.WorkflowExecutionAlreadyStarted.
func Start(ctx context.Context, c client.Client, taskQueue string, in Input) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, startOptions(in, taskQueue), CrawlTaskWorkflow, in)
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
	in := Input{OriginalTaskID: originalTaskID, Source: crawl.SourceKafka, CompletionDeadline: n.CompletionDeadline}
	opts := startOptions(in, n.TaskQueue)
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
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
	in := Input{OriginalTaskID: c.OriginalTaskID, Source: crawl.SourceKafka, CompletionDeadline: n.CompletionDeadline}
	opts := startOptions(in, n.TaskQueue)
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
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

// WaitingFor asks a running task's workflow what it waits for (its state query): the crawler
// until its timeout, or the tweets until the completion deadline. nil once it finished.
func WaitingFor(ctx context.Context, c client.Client, originalTaskID int64) (*waiting.For, error) {
	id := WorkflowID(originalTaskID)
	v, err := c.QueryWorkflow(ctx, id, "", QueryState)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", id, err)
	}
	var st State
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode state of %s: %w", id, err)
	}
	return st.WaitingFor, nil
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
