package webhook

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/searchattr"
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
		if done, out, err := d.held(ctx); done {
			return out, err
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
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, attemptOptions), a.WebhookAttempt,
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
		if err := workflow.Sleep(ctx, in.Policy.RetryBackoff); err != nil {
			return DeliveryOutcome{}, err
		}
	}
}

// held waits for the outcome of the sweep that claimed the row (webhook.ClaimHold at most) and applies
// it; done is true when the row's delivery is over.
func (d *delivery) held(ctx workflow.Context) (bool, DeliveryOutcome, error) {
	in := &d.in
	d.state.Checks++
	var sig webhook.SweepOutcome
	received := false
	timerCtx, cancel := workflow.WithCancel(ctx)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalSweepOutcome), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &sig)
		received = true
	})
	sel.AddFuture(workflow.NewTimer(timerCtx, webhook.ClaimHold), func(workflow.Future) {})
	sel.Select(ctx)
	cancel()
	if !received {
		d.log.Warn("webhook sweep did not report on its claimed row; going on alone")
		return false, DeliveryOutcome{}, nil
	}
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
	return false, DeliveryOutcome{}, workflow.Sleep(ctx, in.Policy.RetryBackoff)
}

// movedOn is the outcome of a row that was delivered or closed by someone else before this
// workflow could push it: nothing pushed, nothing written.
func (d *delivery) movedOn() DeliveryOutcome {
	r := d.in.Row
	d.state.Status, d.state.RetryCount, d.state.LastError, d.state.Waiting = r.Status, r.RetryCount, r.LastError, nil
	return DeliveryOutcome{Status: r.Status, RetryCount: r.RetryCount, LastError: r.LastError}
}

// wait handles a not-ready verdict: past the deadline the row becomes error, otherwise a
// durable timer with exponential backoff.
func (d *delivery) wait(ctx workflow.Context, waiting []string) (bool, DeliveryOutcome, error) {
	in := &d.in
	d.state.Waiting = waiting
	now := workflow.Now(ctx)
	if in.Policy.ReadinessDeadline > 0 && now.Sub(in.Since) >= in.Policy.ReadinessDeadline {
		tr := webhook.DeadlineExceeded(d.state.RetryCount, in.Row.HasStartAt, in.Since, now, in.Policy.ReadinessDeadline, waiting)
		if err := d.writeBack(ctx, tr); err != nil {
			return true, DeliveryOutcome{}, err
		}
		return true, DeliveryOutcome{Status: tr.Status, RetryCount: tr.RetryCount, LastError: tr.LastError}, nil
	}
	sleep := in.Wait
	if in.Policy.ReadinessDeadline > 0 {
		sleep = min(sleep, in.Since.Add(in.Policy.ReadinessDeadline).Sub(now))
	}
	d.log.Info("webhook row waiting for tasks", "webhook_status", d.state.Status, "waiting", waiting, "next_check_in", sleep)
	if err := workflow.Sleep(ctx, sleep); err != nil {
		return true, DeliveryOutcome{}, err
	}
	in.Wait = min(in.Wait*2, in.Policy.ReadinessBackoffMax)
	return false, DeliveryOutcome{}, nil
}

func (d *delivery) writeBack(ctx workflow.Context, tr webhook.Transition) error {
	in := &d.in
	var a *webhookact.Activities
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, writeBackOptions), a.WebhookWriteBack,
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
	d.log.Info("webhook row written back", "webhook_status", tr.Status, "retry_count", tr.RetryCount, "last_error", tr.LastError)
	return workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(tr.Status))
}
