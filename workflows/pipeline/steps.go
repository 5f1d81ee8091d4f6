package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
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
	// minCooldownWait is the shortest wait for a provider's circuit breaker.
	minCooldownWait = time.Second
)

// providerCall runs a step against one provider. A *stepFailure means "stop, do not try another
// provider"; any other error lets the next healthy candidate try.
type providerCall func(ctx workflow.Context, i int, provider string) (map[string]any, error)

// breakerChange versions the circuit breaker's path: when every candidate is held by its breaker
// (none usable, or each call refused as ErrTypeCircuitOpen), the step waits for the earliest
// cooldown to end, within its timeout_seconds, and chooses again. Asked lazily, at that point, so
// runs that never meet an open breaker record no marker.
const breakerChange = "pipeline-circuit-breaker"

// runWithFallback picks the step's healthy providers and tries them in order.
func (r *run) runWithFallback(ctx workflow.Context, i int, call providerCall) (string, map[string]any, error) {
	st := r.schema.Steps[i]
	deadline := workflow.Now(ctx).Add(time.Duration(st.EffectiveTimeoutSeconds()) * time.Second)
	bctx := workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
	for {
		var choice pipeline.ChooseResult
		if err := workflow.ExecuteLocalActivity(bctx, r.acts.choose,
			pipeline.ChooseRequest{TaskID: r.in.TaskID, StepIndex: i, Candidates: st.Candidates()}).Get(ctx, &choice); err != nil {
			return "", nil, err
		}
		if len(choice.Usable) == 0 {
			again, err := r.awaitCooldown(ctx, choice.WaitUntil, deadline)
			if err != nil {
				return "", nil, err
			}
			if !again {
				return "", nil, &stepFailure{index: i, msg: "all providers unavailable: " + strings.Join(choice.Skipped, ", ")}
			}
			continue
		}
		provider, out, held, err := r.tryProviders(ctx, i, call, choice.Usable)
		if err == nil || held.IsZero() {
			return provider, out, err
		}
		again, werr := r.awaitCooldown(ctx, held, deadline)
		if werr != nil {
			return "", nil, werr
		}
		if !again {
			return "", nil, err
		}
	}
}

// tryProviders tries the usable providers in order. When none served and each one tried was held
// by its circuit breaker (breakerChange), held is when the earliest may be tried again.
func (r *run) tryProviders(ctx workflow.Context, i int, call providerCall, usable []string) (string, map[string]any, time.Time, error) {
	var tried []string
	var held time.Time
	failed := false
	for _, provider := range usable {
		out, err := call(ctx, i, provider)
		if err == nil {
			return provider, out, time.Time{}, nil
		}
		var sf *stepFailure
		if errors.As(err, &sf) {
			return "", nil, time.Time{}, sf
		}
		if ctx.Err() != nil {
			return "", nil, time.Time{}, ctx.Err()
		}
		if isType(err, pipeline.ErrTypeRender) {
			return "", nil, time.Time{}, &stepFailure{index: i, provider: provider, msg: rootMessage(err)}
		}
		if until, ok := circuitHeld(err); ok && workflow.GetVersion(ctx, breakerChange, workflow.DefaultVersion, 1) == 1 {
			r.log.Info("provider held by its circuit breaker", "step", i, "provider", provider, "until", until)
			if held.IsZero() || until.Before(held) {
				held = until
			}
		} else {
			r.log.Warn("provider failed, trying the next one", "step", i, "provider", provider, "err", err)
			failed = true
		}
		tried = append(tried, fmt.Sprintf("%s: %s", provider, rootMessage(err)))
	}
	if failed {
		held = time.Time{}
	}
	last := usable[len(usable)-1]
	return "", nil, held, &stepFailure{index: i, provider: last, msg: "every provider failed (" + strings.Join(tried, "; ") + ")"}
}

// awaitCooldown sleeps until a held provider may be tried again (breakerChange), when that is
// before the step's deadline; again says the step should choose again.
func (r *run) awaitCooldown(ctx workflow.Context, until, deadline time.Time) (again bool, err error) {
	if until.IsZero() || until.After(deadline) || workflow.GetVersion(ctx, breakerChange, workflow.DefaultVersion, 1) != 1 {
		return false, nil
	}
	// At least minCooldownWait, so a clock skew between worker and workflow cannot spin the loop.
	d := max(until.Sub(workflow.Now(ctx)), minCooldownWait)
	timer := workflow.NewTimerWithOptions(ctx, d, workflow.TimerOptions{Summary: "circuit breaker cooldown"})
	if err := timer.Get(ctx, nil); err != nil {
		return false, err
	}
	return true, nil
}

// circuitHeld reports whether a call was refused (or stopped) by the provider's circuit breaker,
// and until when.
func circuitHeld(err error) (time.Time, bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeCircuitOpen {
		return time.Time{}, false
	}
	var until time.Time
	if ae.HasDetails() {
		_ = ae.Details(&until)
	}
	return until, !until.IsZero()
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
	actx := workflow.WithActivityOptions(ctx, callOptions(r.schema.Steps[i]))
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
		if err := workflow.Sleep(ctx, min(interval, left)); err != nil {
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
	})
	r.scf.open(i)
	defer r.scf.close()
	var inv pipeline.InvokeResult
	if err := workflow.ExecuteActivity(actx, r.acts.invokeSCF, r.callRequest(i, "")).Get(ctx, &inv); err != nil {
		return nil, &stepFailure{index: i, msg: fmt.Sprintf("invoke %s: %s", st.SCFFunction, rootMessage(err))}
	}
	timeout := time.Duration(st.EffectiveTimeoutSeconds()) * time.Second
	got, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { return r.scf.deliveredFor(i) != nil })
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
