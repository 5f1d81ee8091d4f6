package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/waiting"
)

// Retry defaults for a step without a `retry` block: one retry after a second, then the next
// provider.
const (
	defaultCallAttempts = 2
	defaultCallDelay    = time.Second
	// pollAttempts retries one status request (network blips) before the provider counts as failed.
	pollAttempts = 3
	// maxPollCallTimeout bounds one status request.
	maxPollCallTimeout = time.Minute
	// invokeTimeout bounds the request that starts an SCF function (it only enqueues work).
	invokeTimeout = 30 * time.Second
)

// providerCall runs a step against one provider. A *stepFailure means "stop, do not try another
// provider"; any other error lets the next healthy candidate try.
type providerCall func(ctx workflow.Context, i int, provider string) (map[string]any, error)

// runWithFallback picks the step's healthy providers and tries them in order.
func (r *run) runWithFallback(ctx workflow.Context, i int, call providerCall) (string, map[string]any, error) {
	st := r.schema.Steps[i]
	bctx := workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
	var choice pipeline.ChooseResult
	if err := workflow.ExecuteLocalActivity(bctx, r.acts.choose,
		pipeline.ChooseRequest{TaskID: r.in.TaskID, StepIndex: i, Candidates: st.Candidates()}).Get(ctx, &choice); err != nil {
		return "", nil, err
	}
	if len(choice.Usable) == 0 {
		return "", nil, &stepFailure{index: i, msg: "all providers unavailable: " + strings.Join(choice.Skipped, ", ")}
	}
	var tried []string
	for _, provider := range choice.Usable {
		r.waitOn(ctx, i, provider, waiting.Call, "calling "+provider, time.Time{})
		out, err := call(ctx, i, provider)
		if err == nil {
			return provider, out, nil
		}
		var sf *stepFailure
		if errors.As(err, &sf) {
			return "", nil, sf
		}
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		if isType(err, pipeline.ErrTypeRender) {
			return "", nil, &stepFailure{index: i, provider: provider, msg: rootMessage(err)}
		}
		r.log.Warn("provider failed, trying the next one", "step", i, "provider", provider, "err", err)
		tried = append(tried, fmt.Sprintf("%s: %s", provider, rootMessage(err)))
	}
	last := choice.Usable[len(choice.Usable)-1]
	return "", nil, &stepFailure{index: i, provider: last, msg: "every provider failed (" + strings.Join(tried, "; ") + ")"}
}

// callOptions turns the step's timeout_seconds and retry into activity options.
func callOptions(st pipeline.Step) workflow.ActivityOptions {
	attempts, delay := defaultCallAttempts, defaultCallDelay
	if st.Retry != nil {
		attempts, delay = st.Retry.MaxAttempts, time.Duration(st.Retry.DelaySeconds)*time.Second
	}
	if delay <= 0 {
		delay = 100 * time.Millisecond // Temporal needs a positive interval; 0 means "at once"
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Duration(st.EffectiveTimeoutSeconds()) * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: delay, BackoffCoefficient: 1, MaximumInterval: delay,
			MaximumAttempts:        int32(attempts),
			NonRetryableErrorTypes: []string{pipeline.ErrTypeRender, pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
	}
}

func (r *run) callSync(ctx workflow.Context, i int, provider string) (map[string]any, error) {
	opts := callOptions(r.schema.Steps[i])
	opts.Summary = callSummary("call", r.schema.Steps[i], i, provider)
	actx := workflow.WithActivityOptions(ctx, opts)
	var res pipeline.CallResult
	if err := workflow.ExecuteActivity(actx, r.acts.callSync, r.callRequest(i, provider)).Get(ctx, &res); err != nil {
		return nil, err
	}
	return res.Output, nil
}

// callAsync submits the job, then polls with durable timers: a worker restart resumes the loop
// from history and never submits the job again.
func (r *run) callAsync(ctx workflow.Context, i int, provider string) (map[string]any, error) {
	st := r.schema.Steps[i]
	p := st.Polling
	deadline := workflow.Now(ctx).Add(time.Duration(st.EffectiveTimeoutSeconds()) * time.Second)
	submitOpts := callOptions(st)
	submitOpts.Summary = callSummary("submit a job to", st, i, provider)
	var sub pipeline.SubmitResult
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, submitOpts), r.acts.submitAsync,
		r.callRequest(i, provider)).Get(ctx, &sub); err != nil {
		return nil, err
	}
	if done, out, err := r.decide(i, provider, sub.Status, sub.Output, sub.Output); done {
		return out, err
	}
	pollCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: min(time.Duration(st.EffectiveTimeoutSeconds())*time.Second, maxPollCallTimeout),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: pollAttempts,
			NonRetryableErrorTypes: []string{pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
		Summary: callSummary("poll job "+sub.VendorTaskID+" at", st, i, provider),
	})
	interval := time.Duration(p.IntervalSeconds) * time.Second
	status := sub.Status
	for attempt := 1; attempt <= p.MaxAttempts; attempt++ {
		// The last wait is shortened to end at the deadline, so interval×max_attempts equal to
		// timeout_seconds (as in the model_pose12 example) still gets its last poll.
		left := deadline.Sub(workflow.Now(ctx))
		if left <= 0 {
			return nil, &stepFailure{index: i, provider: provider, msg: fmt.Sprintf(
				"vendor task %s still %q when the step's timeout of %ds ran out", sub.VendorTaskID, status, st.EffectiveTimeoutSeconds())}
		}
		wait := min(interval, left)
		r.waitOn(ctx, i, provider, waiting.Poll, fmt.Sprintf("vendor job %s is %q; poll %d/%d", sub.VendorTaskID, status,
			attempt, p.MaxAttempts), workflow.Now(ctx).Add(wait))
		// The same timer command as workflow.Sleep, with a summary for the Web UI.
		if err := workflow.NewTimerWithOptions(ctx, wait, workflow.TimerOptions{
			Summary: pollTimerSummary(i, st, sub.VendorTaskID, attempt)}).Get(ctx, nil); err != nil {
			return nil, err
		}
		var poll pipeline.PollResult
		if err := workflow.ExecuteActivity(pollCtx, r.acts.pollAsync, pipeline.PollRequest{TaskID: r.in.TaskID, StepIndex: i,
			ProviderRef: provider, Step: st, VendorTaskID: sub.VendorTaskID}).Get(ctx, &poll); err != nil {
			return nil, err
		}
		status = poll.Status
		if done, out, err := r.decide(i, provider, poll.Status, sub.Output, poll.Output); done {
			return out, err
		}
	}
	return nil, &stepFailure{index: i, provider: provider, msg: fmt.Sprintf(
		"vendor task %s still %q after %d polls", sub.VendorTaskID, status, p.MaxAttempts)}
}

// decide applies complete_statuses/failed_statuses. The final output is the mapped status
// response, with fields only the submit response had (vendor_task_id) carried over.
func (r *run) decide(i int, provider, status string, submitted, polled map[string]any) (bool, map[string]any, error) {
	p := r.schema.Steps[i].Polling
	switch {
	case contains(p.CompleteStatuses, status):
		out := make(map[string]any, len(polled)+len(submitted))
		for k, v := range submitted {
			out[k] = v
		}
		for k, v := range polled {
			out[k] = v
		}
		return true, out, nil
	case contains(p.FailedStatuses, status):
		return true, nil, &stepFailure{index: i, provider: provider, msg: fmt.Sprintf("vendor reported status %q", status)}
	}
	return false, nil, nil
}

// runSCF invokes the function and waits up to timeout_seconds for its signed callback, which the
// callback endpoint delivers through the step-callback update. The step is open for its callback
// before the invocation is scheduled, so a fast function's callback is not refused.
func (r *run) runSCF(ctx workflow.Context, i int) (map[string]any, error) {
	st := r.schema.Steps[i]
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: invokeTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{pipeline.ErrTypeRender, pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
		Summary: fmt.Sprintf("invoke %s for step %d %s", st.SCFFunction, i+1, st.Name),
	})
	r.waitOn(ctx, i, "", waiting.Call, "invoking "+st.SCFFunction, time.Time{})
	r.scf.open(i)
	defer r.scf.close()
	var inv pipeline.InvokeResult
	if err := workflow.ExecuteActivity(actx, r.acts.invokeSCF, r.callRequest(i, "")).Get(ctx, &inv); err != nil {
		return nil, &stepFailure{index: i, msg: fmt.Sprintf("invoke %s: %s", st.SCFFunction, rootMessage(err))}
	}
	timeout := time.Duration(st.EffectiveTimeoutSeconds()) * time.Second
	r.waitOn(ctx, i, "", waiting.Callback, "waiting for the callback of "+st.SCFFunction, workflow.Now(ctx).Add(timeout))
	// The same timer as workflow.AwaitWithTimeout, with a summary for the Web UI.
	got, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: timeout, TimerOptions: workflow.TimerOptions{
		Summary: fmt.Sprintf("step %d %s: callback of %s times out", i+1, st.Name, st.SCFFunction)}},
		func() bool { return r.scf.deliveredFor(i) != nil })
	if err != nil {
		return nil, err
	}
	if !got {
		return nil, &stepFailure{index: i, msg: fmt.Sprintf("no callback from %s within %ds", st.SCFFunction, st.EffectiveTimeoutSeconds())}
	}
	cb := r.scf.deliveredFor(i)
	if cb.Status != pipeline.StatusSuccess {
		msg := cb.ErrorMessage
		if msg == "" {
			msg = fmt.Sprintf("%s reported status %q", st.SCFFunction, cb.Status)
		}
		return nil, &stepFailure{index: i, msg: msg}
	}
	out, _, err := pipeline.MapOutput(st.OutputMapping, cb.Body)
	if err != nil {
		return nil, &stepFailure{index: i, msg: err.Error()}
	}
	return out, nil
}

func isType(err error, typ string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == typ
}

// rootMessage is the activity's own message, without Temporal's wrapping ("activity error
// (type…)") and the error type suffix, so a task's error_reason reads like a sentence.
func rootMessage(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return "timed out (" + te.TimeoutType().String() + ")"
	}
	return err.Error()
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
