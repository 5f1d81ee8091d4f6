package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/waiting"
	"github.com/taskloom/taskloom/internal/webhook"
)

// Activity options: Feishu calls already retry rate limits inside the client; these retries
// cover the rest (network, 5xx) before the loop treats the check as "try again later".
var (
	attemptOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		// The activity heartbeats while it runs, so an attempt lost with its worker is retried
		// after 20 s rather than 2 min.
		HeartbeatTimeout: 20 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 4, NonRetryableErrorTypes: []string{"FeishuNotConfigured", "BadTableURL"}},
	}
	writeBackOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 20, NonRetryableErrorTypes: []string{"FeishuNotConfigured", "BadTableURL"}},
	}
)

// DeliveryOutcome is the final state of a row's workflow.
type DeliveryOutcome struct {
	Status     string `json:"webhook_status"`
	RetryCount int    `json:"retry_count"`
	LastError  string `json:"last_error,omitempty"`
}

type delivery struct {
	in    webhook.DeliveryInput
	state DeliveryState
	log   log.Logger
}

// WebhookDeliveryWorkflow delivers one result row: it waits with durable timers until every
// TaskID is finished (success or error), pushes the payload, writes the row's status back
// after each attempt, and stops on success, after MaxPushFailures failures, or when the
// readiness deadline passes. Long waits continue-as-new to keep the history small.
func WebhookDeliveryWorkflow(ctx workflow.Context, in webhook.DeliveryInput) (DeliveryOutcome, error) {
	d := &delivery{in: in}
	if err := d.setup(ctx); err != nil {
		return DeliveryOutcome{}, err
	}
	return d.run(ctx)
}

func (d *delivery) setup(ctx workflow.Context) error {
	in := &d.in
	if in.Row.RecordID == "" || in.Target.URLs.Webhook == "" || in.Target.URLs.Task == "" {
		return temporal.NewNonRetryableApplicationError("delivery input needs the row's record_id and the task and webhook table URLs", "BadInput", nil)
	}
	if in.Policy.ReadinessBackoff <= 0 {
		in.Policy.ReadinessBackoff = defaultReadinessWait
	}
	if in.Policy.ReadinessBackoffMax < in.Policy.ReadinessBackoff {
		in.Policy.ReadinessBackoffMax = in.Policy.ReadinessBackoff
	}
	if in.Policy.RetryBackoff <= 0 {
		in.Policy.RetryBackoff = in.Policy.ReadinessBackoff
	}
	if in.Since.IsZero() {
		in.Since = workflow.Now(ctx)
	}
	if in.Wait <= 0 {
		in.Wait = in.Policy.ReadinessBackoff
	}
	d.state = DeliveryState{Status: in.Row.Status, RetryCount: in.Row.RetryCount, LastError: in.Row.LastError}
	d.log = log.With(workflow.GetLogger(ctx), "biz_type", in.Row.BizType, "group_id", in.Row.GroupID,
		"task_ids", webhook.FormatTaskIDs(in.Row.TaskIDs), "record_id", in.Row.RecordID)
	return workflow.SetQueryHandler(ctx, QueryState, func() (DeliveryState, error) { return d.state, nil })
}

func (d *delivery) run(ctx workflow.Context) (DeliveryOutcome, error) {
	in := &d.in
	if in.Claimed {
		in.Claimed = false
		return d.held(ctx)
	}
	if in.RetryAfter > 0 {
		in.RetryAfter = 0
		if err := d.retryPush(ctx); err != nil {
			return DeliveryOutcome{}, err
		}
	}
	var a *webhookact.Activities
	for iter := 0; ; iter++ {
		if iter >= maxIterationsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			in.Row.Status, in.Row.RetryCount, in.Row.LastError = d.state.Status, d.state.RetryCount, d.state.LastError
			return DeliveryOutcome{}, workflow.NewContinueAsNewError(ctx, WebhookDeliveryWorkflow, *in)
		}
		d.state.Checks++
		var res webhook.AttemptResult
		opts := attemptOptions
		opts.Summary = fmt.Sprintf("check %d: readiness of %d TaskIDs, push when ready", d.state.Checks, len(in.Row.TaskIDs))
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), a.WebhookAttempt,
			webhook.AttemptInput{Target: in.Target, Row: in.Row}).Get(ctx, &res)
		if err != nil {
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) && appErr.NonRetryable() {
				return DeliveryOutcome{}, err
			}
			d.log.Warn("webhook readiness check failed; will retry", "webhook_status", d.state.Status, "err", err)
			res = webhook.AttemptResult{Waiting: []string{"check failed: " + err.Error()}}
		}
		if res.Row != nil {
			in.Row, d.state.RetryCount = *res.Row, res.Row.RetryCount
		}
		if res.Done {
			return d.movedOn(), nil
		}
		if !res.Ready {
			if done, out, err := d.wait(ctx, res.Waiting); done {
				return out, err
			}
			continue
		}
		tr := webhook.AfterAttempt(d.state.RetryCount, in.Row.HasStartAt, webhook.Attempt{StartedAt: res.StartedAt, EndedAt: res.EndedAt, Err: res.Err})
		if err := d.writeBack(ctx, tr); err != nil {
			return DeliveryOutcome{}, err
		}
		if tr.Status == webhook.StatusSuccess || tr.Status == webhook.StatusError {
			return DeliveryOutcome{Status: tr.Status, RetryCount: tr.RetryCount, LastError: tr.LastError}, nil
		}
		if err := d.retryPush(ctx); err != nil {
			return DeliveryOutcome{}, err
		}
	}
}

// held waits for the outcome of the sweep that claimed the row and applies it. It sets no timer:
// the claim's WorkflowRunTimeout (webhook.ClaimHold) bounds the hold, so a run whose sweep never
// reports times out and the next sweep finds the row as the lost one left it; a row the sweep did
// not finish continues as new, unbounded, on its own (goOnAlone).
func (d *delivery) held(ctx workflow.Context) (DeliveryOutcome, error) {
	d.state.Checks++
	now := workflow.Now(ctx)
	d.show(ctx, waiting.New(waiting.SweepBatch, "a sweep claimed the row and pushes it in its batch", now, now.Add(webhook.ClaimHold)))
	var sig webhook.SweepOutcome
	workflow.GetSignalChannel(ctx, SignalSweepOutcome).Receive(ctx, &sig)
	done, out, err := d.applyOutcome(ctx, sig)
	if done || err != nil {
		return out, err
	}
	return DeliveryOutcome{}, d.goOnAlone(ctx)
}

// applyOutcome applies what the claiming sweep reported; done is true when the row's delivery
// is over. A failed push leaves in.RetryAfter set: the next push waits RetryBackoff.
func (d *delivery) applyOutcome(ctx workflow.Context, sig webhook.SweepOutcome) (bool, DeliveryOutcome, error) {
	in := &d.in
	if sig.Row != nil {
		in.Row, d.state.RetryCount = *sig.Row, sig.Row.RetryCount
	}
	switch {
	case sig.Done:
		return true, d.movedOn(), nil
	case sig.Transition == nil:
		return false, DeliveryOutcome{}, nil
	}
	tr := *sig.Transition
	var err error
	if sig.Written {
		err = d.applied(ctx, tr)
	} else {
		err = d.writeBack(ctx, tr)
	}
	if err != nil {
		return true, DeliveryOutcome{}, err
	}
	if tr.Status == webhook.StatusSuccess || tr.Status == webhook.StatusError {
		return true, DeliveryOutcome{Status: tr.Status, RetryCount: tr.RetryCount, LastError: tr.LastError}, nil
	}
	in.RetryAfter = in.Policy.RetryBackoff
	return false, DeliveryOutcome{}, nil
}

// aloneRunTimeout bounds nothing in practice: a continued run inherits the run timeout it is
// given (0 keeps the claim's), and the readiness and retry loops end by their own deadlines.
const aloneRunTimeout = 10 * 365 * 24 * time.Hour

// goOnAlone continues a claimed run whose row the sweep did not finish as a run of its own,
// without the claim's run timeout, so the readiness and retry loops keep their own deadlines.
func (d *delivery) goOnAlone(ctx workflow.Context) error {
	in := &d.in
	if in.RetryAfter > 0 { // the sweep's failed push is on the row now
		in.Row.Status, in.Row.RetryCount, in.Row.LastError = d.state.Status, d.state.RetryCount, d.state.LastError
	}
	return workflow.NewContinueAsNewError(workflow.WithWorkflowRunTimeout(ctx, aloneRunTimeout), WebhookDeliveryWorkflow, *in)
}

// retryPush waits RetryBackoff before the next push of a row whose push failed.
func (d *delivery) retryPush(ctx workflow.Context) error {
	backoff := d.in.Policy.RetryBackoff
	now := workflow.Now(ctx)
	d.show(ctx, waiting.New(waiting.PushRetry, fmt.Sprintf("push failed (retry_count %d): %s", d.state.RetryCount, d.state.LastError),
		now, now.Add(backoff)))
	// The same timer command as workflow.Sleep, with a summary for the Web UI.
	return workflow.NewTimerWithOptions(ctx, backoff, workflow.TimerOptions{
		Summary: fmt.Sprintf("push again after retry_count %d", d.state.RetryCount)}).Get(ctx, nil)
}

// show sets what the row waits for on the state query and as the execution's current details
// (docs/operations.md "What each execution shows"); nil shows the row's status.
func (d *delivery) show(ctx workflow.Context, w *waiting.For) {
	d.state.WaitingFor = w
	if w != nil {
		workflow.SetCurrentDetails(ctx, w.Sentence())
		return
	}
	line := "webhook_status " + d.state.Status
	if d.state.LastError != "" {
		line += ": " + d.state.LastError
	}
	workflow.SetCurrentDetails(ctx, line)
}

// movedOn is the outcome of a row that was delivered or closed by someone else before this
// workflow could push it: nothing pushed, nothing written.
func (d *delivery) movedOn() DeliveryOutcome {
	r := d.in.Row
	d.state.Status, d.state.RetryCount, d.state.LastError, d.state.Waiting = r.Status, r.RetryCount, r.LastError, nil
	d.state.WaitingFor = nil
	return DeliveryOutcome{Status: r.Status, RetryCount: r.RetryCount, LastError: r.LastError}
}

// wait handles a not-ready verdict: past the deadline the row becomes error, otherwise a
// durable timer with exponential backoff.
func (d *delivery) wait(ctx workflow.Context, notFinal []string) (bool, DeliveryOutcome, error) {
	in := &d.in
	d.state.Waiting = notFinal
	now := workflow.Now(ctx)
	if in.Policy.ReadinessDeadline > 0 && now.Sub(in.Since) >= in.Policy.ReadinessDeadline {
		tr := webhook.DeadlineExceeded(d.state.RetryCount, in.Row.HasStartAt, in.Since, now, in.Policy.ReadinessDeadline, notFinal)
		if err := d.writeBack(ctx, tr); err != nil {
			return true, DeliveryOutcome{}, err
		}
		return true, DeliveryOutcome{Status: tr.Status, RetryCount: tr.RetryCount, LastError: tr.LastError}, nil
	}
	sleep := in.Wait
	if in.Policy.ReadinessDeadline > 0 {
		sleep = min(sleep, in.Since.Add(in.Policy.ReadinessDeadline).Sub(now))
	}
	d.log.Info("webhook row waiting for tasks", "webhook_status", d.state.Status, "waiting", notFinal, "next_check_in", sleep)
	detail := fmt.Sprintf("readiness: %d of %d TaskIDs not final: %s", len(notFinal), len(in.Row.TaskIDs), strings.Join(notFinal, ", "))
	if in.Policy.ReadinessDeadline > 0 {
		detail += "; gives up at " + in.Since.Add(in.Policy.ReadinessDeadline).UTC().Format("15:04:05 UTC")
	}
	d.show(ctx, waiting.New(waiting.TasksNotFinal, detail, in.Since, now.Add(sleep)))
	// The same timer command as workflow.Sleep, with a summary for the Web UI.
	if err := workflow.NewTimerWithOptions(ctx, sleep, workflow.TimerOptions{
		Summary: fmt.Sprintf("next readiness check (%d TaskIDs not final)", len(notFinal))}).Get(ctx, nil); err != nil {
		return true, DeliveryOutcome{}, err
	}
	in.Wait = min(in.Wait*2, in.Policy.ReadinessBackoffMax)
	return false, DeliveryOutcome{}, nil
}

func (d *delivery) writeBack(ctx workflow.Context, tr webhook.Transition) error {
	in := &d.in
	var a *webhookact.Activities
	opts := writeBackOptions
	opts.Summary = "write back webhook_status " + tr.Status
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), a.WebhookWriteBack,
		webhook.WriteBackInput{URLs: in.Target.URLs, RecordID: in.Row.RecordID, Transition: tr}).Get(ctx, nil)
	if err != nil {
		return fmt.Errorf("write back row %s: %w", in.Row.RecordID, err)
	}
	return d.applied(ctx, tr)
}

// applied records a transition that is on the row now.
func (d *delivery) applied(ctx workflow.Context, tr webhook.Transition) error {
	in := &d.in
	in.Row.HasStartAt = true
	d.state.Status, d.state.RetryCount, d.state.LastError, d.state.Waiting = tr.Status, tr.RetryCount, tr.LastError, nil
	d.show(ctx, nil)
	d.log.Info("webhook row written back", "webhook_status", tr.Status, "retry_count", tr.RetryCount, "last_error", tr.LastError)
	// TaskloomStatus changes only when the answer to the console's questions does (a row becomes
	// failed or error, or stops being one): a pending row delivered in one push keeps the pending
	// it was started with.
	shown, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(searchattr.Status)
	if !webhook.StatusAttributeChanges(shown, tr.Status) {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(tr.Status))
}
