// Package entry holds EntryTaskWorkflow: one durable task per envelope. It runs the
// named pipeline as a child workflow, retries a failed run after a durable timer whose curve
// depends on the channel, and, once the retry budget is used up, suspends until an operator
// signals resume or drop. A query answers the task's status while it runs.
package entry

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// Activity options, next to the code that uses them.
var (
	// recordOptions: workflow_runs writes are retried until Mongo answers; a status that never
	// reaches workflow_runs would be lost once the workflow closes.
	recordOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	}
	// sendReplyOptions: every attempt continues after the last part recorded, so attempts are
	// bounded by time rather than by count: a long reply under Telegram's flood control (429,
	// retry_after) keeps making progress. A refusal (403/400) is final at once. The heartbeat
	// after each part lets a dead worker's attempt be retried within half a minute rather than
	// at the end of its start-to-close timeout.
	sendReplyOptions = workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		HeartbeatTimeout:       30 * time.Second,
		ScheduleToCloseTimeout: 30 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 2 * time.Minute,
			NonRetryableErrorTypes: entry.NonRetryableRefusalTypes()},
	}
)

// continueAsNewAfter is the history length past which a resumed task continues as new, so an
// operator resuming the same task many times cannot grow its history without bound.
const continueAsNewAfter = 2000

type run struct {
	// acts stays nil: its method values only name the activities.
	acts   *entryact.Activities
	in     entry.WorkflowInput
	st     *entry.TaskStatus
	seq    int
	log    log.Logger
	resume workflow.ReceiveChannel
	drop   workflow.ReceiveChannel
	// firstRecorded says EntryStartRun recorded the first attempt's processing (attempt then only
	// starts the child).
	firstRecorded bool
	// shown is the TaskloomStatus the execution shows (pending from its start).
	shown string
}

// EntryTaskWorkflow runs one envelope to completion, retry, suspension or drop, and returns the
// final status.
func EntryTaskWorkflow(ctx workflow.Context, in entry.WorkflowInput) (*entry.TaskStatus, error) {
	r, err := setup(ctx, in)
	if err != nil {
		return nil, err
	}
	switch ran, err := r.accept(ctx); {
	case err != nil:
		return nil, err
	case ran:
		return r.st, nil
	}
	return r.execute(ctx)
}

// accept records the task in workflow_runs before anything else, so every later status write
// finds its document, in one write with its first attempt's processing (EntryStartRun). A
// continued run's record exists already. A worker that dies after the write finds the activity's
// result in the history and goes on with the child; one that dies before it runs the idempotent
// write again. ran reports a task id whose
// document says the task has already run (an earlier execution Temporal's retention has
// forgotten): r.st is then that run's status, and this execution must not run the task again.
func (r *run) accept(ctx workflow.Context) (ran bool, err error) {
	if r.in.Carry != nil {
		return false, nil
	}
	r.st.Attempts = 1
	r.st.PipelineTaskID = r.pipelineTaskID(ctx)
	u, now := r.update(ctx, entry.StatusProcessing, "")
	var earlier *entry.TaskStatus
	ropts := recordOptions
	ropts.Summary = "record task, processing attempt 1"
	err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ropts), r.acts.EntryStartRun,
		entry.StartRequest{Envelope: r.in.Envelope, First: u}).Get(ctx, &earlier)
	if err != nil {
		return false, fmt.Errorf("record accepted task: %w", err)
	}
	if r.endIfRan(ctx, earlier) {
		return true, nil
	}
	r.firstRecorded = true
	r.shows(ctx, entry.StatusProcessing, "", now, nil)
	return false, nil
}

// pipelineTaskID is the pipeline task id of the current attempt, computed from the task id
// (the workflow ID, WorkflowID) and this run's id and start.
func (r *run) pipelineTaskID(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	return entry.PipelineTaskID(r.st.TaskID, info.WorkflowExecution.RunID, info.WorkflowStartTime, r.st.Attempts)
}

// endIfRan takes over the status of a task that has already run (earlier, from the accepting
// write; nil when the task is new) and reports whether it did.
func (r *run) endIfRan(ctx workflow.Context, earlier *entry.TaskStatus) bool {
	if earlier == nil {
		return false
	}
	r.st = earlier
	r.log.Warn("entry task already ran under this id; ending without running it again", "status", earlier.Status)
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(earlier.Status)); err != nil {
		r.log.Warn("upsert TaskloomStatus failed", "status", earlier.Status, "err", err)
	}
	return true
}

func setup(ctx workflow.Context, in entry.WorkflowInput) (*run, error) {
	env := in.Envelope
	if env.TaskID == "" || env.Payload.WorkflowID == "" {
		return nil, temporal.NewNonRetryableApplicationError("entry input needs a task id and a workflowId", "InvalidInput", nil)
	}
	r := &run{in: in,
		st: &entry.TaskStatus{TaskID: env.TaskID, Status: entry.StatusPending, Retry: entry.Retry{Max: env.Retry.Max},
			WorkflowID: env.Payload.WorkflowID, Channel: env.Payload.Telemetry.Channel},
		resume: workflow.GetSignalChannel(ctx, entry.SignalResume),
		drop:   workflow.GetSignalChannel(ctx, entry.SignalDrop),
		shown:  entry.StatusPending,
	}
	if c := in.Carry; c != nil {
		// A continued run starts with the attributes its predecessor showed, not pending.
		r.st.Attempts, r.seq, r.shown = c.Attempts, c.Seq, ""
	}
	r.log = log.With(workflow.GetLogger(ctx), "task_id", env.TaskID, "channel", env.Payload.Telemetry.Channel,
		"workflow_id", env.Payload.WorkflowID, "trace_id", env.Context.TraceID)
	if err := workflow.SetQueryHandler(ctx, entry.QueryStatus, func() (entry.TaskStatus, error) { return *r.st, nil }); err != nil {
		return nil, fmt.Errorf("register status query: %w", err)
	}
	return r, nil
}

func (r *run) execute(ctx workflow.Context) (*entry.TaskStatus, error) {
	for {
		output, reason, err := r.runBudget(ctx)
		if err != nil {
			return nil, err
		}
		if output != nil {
			return r.complete(ctx, output)
		}
		if reason == "" { // dropped while waiting for a retry
			return r.st, nil
		}
		if err := r.transition(ctx, entry.StatusSuspended, reason); err != nil {
			return nil, err
		}
		r.log.Warn("entry task suspended", "reason", reason, "attempts", r.st.Attempts)
		resumed, autoDrop := r.awaitOperator(ctx)
		if !resumed {
			return r.dropSuspended(ctx, autoDrop)
		}
		r.st.Retry = entry.Retry{Max: r.in.Envelope.Retry.Max}
		r.st.SuspendedReason, r.st.SuspendedAt, r.st.AutoDropAt = "", nil, nil
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > continueAsNewAfter {
			in := r.in
			in.Carry = &entry.Carry{Attempts: r.st.Attempts, Seq: r.seq}
			return nil, workflow.NewContinueAsNewError(ctx, EntryTaskWorkflow, in)
		}
	}
}

// runBudget runs attempts until one succeeds (output), the budget is used up or the failure
// cannot be retried (reason), or an operator drops the task during a retry wait (neither).
func (r *run) runBudget(ctx workflow.Context) (output map[string]any, reason string, err error) {
	for {
		out, failure, retryable, err := r.attempt(ctx)
		if err != nil || out != nil {
			return out, "", err
		}
		r.st.LastError = failure
		if !retryable {
			return nil, "unrecoverable: " + failure, nil
		}
		if r.st.Retry.Count >= r.st.Retry.Max {
			return nil, fmt.Sprintf("retries exhausted (%d of %d): %s", r.st.Retry.Count, r.st.Retry.Max, failure), nil
		}
		r.st.Retry.Count++
		delay := r.in.RetryDelay(r.st.Retry.Count)
		r.st.Retry.NextAttemptAt = workflow.Now(ctx).Add(delay).UTC()
		if err := r.transition(ctx, entry.StatusRetrying, ""); err != nil {
			return nil, "", err
		}
		r.log.Info("entry task retrying", "retry", r.st.Retry.Count, "delay", delay, "err", failure)
		if dropped := r.awaitRetry(ctx, delay); dropped {
			return nil, "", r.transition(ctx, entry.StatusDropped, "")
		}
		r.st.Retry.NextAttemptAt = time.Time{}
	}
}

// attempt is one run of the pipeline as a child workflow. A failed run returns its reason and
// whether retrying can help; err is only for the workflow's own failures.
func (r *run) attempt(ctx workflow.Context) (output map[string]any, failure string, retryable bool, err error) {
	taskID, err := r.beginAttempt(ctx)
	if err != nil {
		return nil, "", false, err
	}
	env := r.in.Envelope
	// The child's admission resolves and checks the pipeline version (the latest when none is pinned).
	child := pipelinewf.Input{TaskID: taskID, UserID: r.in.UserID, FeatureID: r.in.FeatureID, Pipeline: env.Payload.WorkflowID,
		Version: env.Payload.WorkflowVersion, InputData: entry.InputData(&env)}
	summary, details := pipelinewf.StartMetadata(child)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		StaticSummary:         explain.Summary(summary, "entry "+env.TaskID),
		StaticDetails:         details + fmt.Sprintf("\nRun as attempt %d of entry task `%s`.\n", r.st.Attempts, env.TaskID),
		WorkflowID:            pipeline.WorkflowID(taskID),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(pipelinewf.Kind),
			searchattr.Status.ValueSet(pipeline.StatusPending), searchattr.PipelineName.ValueSet(child.Pipeline)),
	})
	var res pipelinewf.Result
	err = workflow.ExecuteChildWorkflow(cctx, pipelinewf.PipelineWorkflow, child).Get(ctx, &res)
	if err != nil {
		// The child's admission is where an unknown pipeline shows: a refusal retrying cannot help.
		var ae *temporal.ApplicationError
		unknown := errors.As(err, &ae) && ae.Type() == pipeline.ErrTypeUnknownPipeline
		return nil, fmt.Sprintf("pipeline %s: %s", pipelineLabel(child), message(err)), !unknown, nil
	}
	output = map[string]any{}
	if n := len(res.Outputs); n > 0 && res.Outputs[n-1] != nil {
		output = res.Outputs[n-1]
	}
	return output, "", false, nil
}

// beginAttempt counts the attempt, names its pipeline task and records it as processing — unless
// EntryStartRun recorded the first attempt already — and returns the pipeline task id.
func (r *run) beginAttempt(ctx workflow.Context) (string, error) {
	if r.firstRecorded {
		r.firstRecorded = false
		return r.st.PipelineTaskID, nil
	}
	r.st.Attempts++
	r.st.PipelineTaskID = r.pipelineTaskID(ctx)
	return r.st.PipelineTaskID, r.transition(ctx, entry.StatusProcessing, "")
}

// pipelineLabel names the pipeline a run used: name@version, or the name alone when the envelope
// pinned no version and the child resolved it.
func pipelineLabel(p pipelinewf.Input) string {
	if p.Version == "" {
		return p.Pipeline
	}
	return p.Pipeline + "@" + p.Version
}

// message is the innermost application error's message (what a human needs), else err's text.
func message(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return err.Error()
}

// awaitRetry waits the retry delay on a durable timer. A resume signal skips the wait; a drop
// signal ends the task (dropped reports it).
func (r *run) awaitRetry(ctx workflow.Context, delay time.Duration) (dropped bool) {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	// The same timer command as workflow.NewTimer, with a summary for the Web UI.
	sel.AddFuture(workflow.NewTimerWithOptions(tctx, delay, workflow.TimerOptions{
		Summary: fmt.Sprintf("retry %d of %d", r.st.Retry.Count, r.st.Retry.Max)}), func(workflow.Future) {})
	sel.AddReceive(r.resume, func(c workflow.ReceiveChannel, _ bool) { r.receive(ctx, c, entry.SignalResume) })
	sel.AddReceive(r.drop, func(c workflow.ReceiveChannel, _ bool) { r.receive(ctx, c, entry.SignalDrop); dropped = true })
	sel.Select(ctx)
	return dropped
}

// awaitOperator blocks a suspended task until resume (true), drop (false), or — with an auto-drop
// period (a positive SuspendedDropAfter) — until that period ends without either (false, with the
// reason the drop records). A resume or drop cancels the timer; a task without the period waits on
// no timer.
func (r *run) awaitOperator(ctx workflow.Context) (resumed bool, autoDrop string) {
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(r.resume, func(c workflow.ReceiveChannel, _ bool) { r.receive(ctx, c, entry.SignalResume); resumed = true })
	sel.AddReceive(r.drop, func(c workflow.ReceiveChannel, _ bool) { r.receive(ctx, c, entry.SignalDrop) })
	if after := r.in.SuspendedDropAfter; after != nil && *after > 0 {
		tctx, cancel := workflow.WithCancel(ctx)
		defer cancel()
		timer := workflow.NewTimerWithOptions(tctx, *after, workflow.TimerOptions{Summary: "auto-drop unless resumed"})
		sel.AddFuture(timer, func(workflow.Future) {
			autoDrop = fmt.Sprintf("%s: not resumed within %s", entry.AutoDropReason, *after)
		})
	}
	sel.Select(ctx)
	if autoDrop != "" {
		r.log.Warn("suspended entry task not resumed in time; dropping it", "after", *r.in.SuspendedDropAfter)
	}
	return resumed, autoDrop
}

// dropSuspended ends a suspended task as dropped: by an operator (autoDrop empty) or by the auto-drop timer
// (autoDrop is the reason, recorded as drop_reason with auto_dropped for the stats).
func (r *run) dropSuspended(ctx workflow.Context, autoDrop string) (*entry.TaskStatus, error) {
	if autoDrop == "" {
		return r.st, r.transition(ctx, entry.StatusDropped, "")
	}
	r.st.DropReason, r.st.AutoDropped = autoDrop, true
	return r.st, r.transition(ctx, entry.StatusDropped, autoDrop)
}

// receive takes one signal; its payload is optional (the temporal CLI may send none).
func (r *run) receive(ctx workflow.Context, c workflow.ReceiveChannel, name string) {
	var p entry.SignalPayload
	c.Receive(ctx, &p)
	r.log.Info("operator signal", "signal", name, "operator", p.Operator, "reason", p.Reason)
}

// transition records the status in workflow_runs, then shows it: the status query and the
// TaskloomStatus search attribute (ops listings and stats query it) change only once the record
// exists, so a caller who sees a status can also read it from workflow_runs.
//
// The straight path (pending, processing, completed: no retry, no
// suspension) upserts nothing: visibility tells its states apart by ExecutionStatus (running or
// completed with TaskloomStatus still pending, see intake.Stats), and each upsert is a billed
// action. The first status off that path (retrying, suspended, dropped) is upserted, and every
// status after it, so the ops listings and stats always find those tasks.
func (r *run) transition(ctx workflow.Context, status, reason string) error {
	u, now := r.update(ctx, status, reason)
	ropts := recordOptions
	ropts.Summary = "record status " + status
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ropts), r.acts.EntryRecordStatus, u).Get(ctx, nil); err != nil {
		return fmt.Errorf("record status %s: %w", status, err)
	}
	r.shows(ctx, status, reason, now, u.AutoDropAt)
	return nil
}

// update is the next status write (it takes the next sequence number) and its time.
func (r *run) update(ctx workflow.Context, status, reason string) (entry.StatusUpdate, time.Time) {
	now := workflow.Now(ctx).UTC()
	r.seq++
	var dropAt *time.Time
	if after := r.in.SuspendedDropAfter; status == entry.StatusSuspended && after != nil && *after > 0 {
		at := now.Add(*after) // the auto-drop timer starts at once (awaitOperator)
		dropAt = &at
	}
	return entry.StatusUpdate{TaskID: r.st.TaskID, Seq: r.seq, Status: status, Retry: r.st.Retry, Attempts: r.st.Attempts,
		PipelineTaskID: r.st.PipelineTaskID, Result: r.st.Result, LastError: r.st.LastError, Reason: reason, At: now,
		AutoDropped: r.st.AutoDropped, AutoDropAt: dropAt}, now
}

// shows makes a recorded status the execution's: the status query, the current details and,
// off the straight path (see transition), TaskloomStatus.
func (r *run) shows(ctx workflow.Context, status, reason string, now time.Time, dropAt *time.Time) {
	r.st.Status = status
	if status == entry.StatusSuspended {
		r.st.SuspendedReason, r.st.SuspendedAt, r.st.AutoDropAt = reason, &now, dropAt
	}
	r.show(ctx, now)
	if r.shown == entry.StatusPending && (status == entry.StatusProcessing || status == entry.StatusCompleted) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(status)); err != nil {
		r.log.Warn("upsert TaskloomStatus failed", "status", status, "err", err)
		return
	}
	r.shown = status
}

// complete records the result and, for Telegram, sends it to the chat. The task is completed
// whatever becomes of the reply; the reply's own outcome is recorded beside it.
func (r *run) complete(ctx workflow.Context, output map[string]any) (*entry.TaskStatus, error) {
	r.st.Result, r.st.LastError = output, ""
	if err := r.transition(ctx, entry.StatusCompleted, ""); err != nil {
		return nil, err
	}
	if !r.in.Reply {
		return r.st, nil
	}
	env := r.in.Envelope
	req := entry.ReplyRequest{TaskID: env.TaskID, ChatID: env.Payload.ChatID(), Text: entry.ReplyText(output, r.in.ReplyField),
		ReplyTo: messageID(env.Payload.CoreEnvelope)}
	return r.st, r.reply(ctx, req)
}

// reply sends the reply and keeps what became of it on the status: sent with its parts, or, when
// Telegram refused it or its retries ran out, failed with the reason, recorded in workflow_runs
// before it shows (the status query, TaskloomReply=failed). A reply that fails costs one more
// activity, the record; one that goes out costs none (the send activity records its parts).
func (r *run) reply(ctx workflow.Context, req entry.ReplyRequest) error {
	var sent entry.Reply
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, sendReplyOptions), r.acts.EntrySendReply, req).Get(ctx, &sent)
	if err == nil {
		r.st.Reply = &sent
		return nil
	}
	r.log.Warn("telegram reply failed", "err", err)
	f := entry.ReplyFailure{TaskID: req.TaskID, Error: message(err), At: workflow.Now(ctx).UTC()}
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, recordOptions), r.acts.EntryRecordReplyFailure, f).Get(ctx, nil); err != nil {
		return fmt.Errorf("record failed reply: %w", err)
	}
	r.st.Reply = &entry.Reply{Status: entry.ReplyFailed, Error: f.Error, At: f.At}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Reply.ValueSet(entry.ReplyFailed)); err != nil {
		r.log.Warn("upsert TaskloomReply failed", "err", err)
	}
	return nil
}

// messageID is coreEnvelope.metadata.message_id (the message the reply answers), 0 when absent.
func messageID(core map[string]any) int64 {
	md, _ := core["metadata"].(map[string]any)
	switch v := md["message_id"].(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// show sets what the task waits for (entry.WaitingFor, nil once final) on the status query and
// as the execution's current details (docs/operations.md "What each execution shows").
func (r *run) show(ctx workflow.Context, since time.Time) {
	r.st.WaitingFor = entry.WaitingFor(r.st, since)
	if w := r.st.WaitingFor; w != nil {
		workflow.SetCurrentDetails(ctx, r.st.Status+": "+w.Sentence())
		return
	}
	line := r.st.Status
	if r.st.LastError != "" && r.st.Status != entry.StatusCompleted {
		line += " after: " + r.st.LastError
	}
	workflow.SetCurrentDetails(ctx, line)
}
