package pipeline

import (
	"errors"
	"fmt"
	"slices"
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

// runWithFallback picks the step's healthy providers and tries them in order. When every
// candidate is held by its circuit breaker (none usable, or each call refused as
// ErrTypeCircuitOpen), the step waits for the earliest cooldown to end, within its
// timeout_seconds, and chooses again.
func (r *run) runWithFallback(ctx workflow.Context, i int, call providerCall) (string, map[string]any, error) {
	st := r.schema.Steps[i]
	deadline := workflow.Now(ctx).Add(time.Duration(st.EffectiveTimeoutSeconds()) * time.Second)
	bctx := workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
	r.cost.beginStep()
	for {
		var choice pipeline.ChooseResult
		if c := r.takeChoice(i); c != nil {
			choice = *c
		} else if err := workflow.ExecuteLocalActivity(bctx, acts.PipelineChooseProviders,
			pipeline.ChooseRequest{TaskID: r.in.TaskID, StepIndex: i, Candidates: st.Candidates()}).Get(ctx, &choice); err != nil {
			return "", nil, err
		}
		if len(choice.Usable) == 0 {
			again, err := r.awaitCooldown(ctx, i, choice.WaitUntil, deadline)
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
		again, werr := r.awaitCooldown(ctx, i, held, deadline)
		if werr != nil {
			return "", nil, werr
		}
		if !again {
			return "", nil, err
		}
	}
}

// tryProviders tries the usable providers in order. When none served and each one tried was held
// by its circuit breaker, held is when the earliest may be tried again.
func (r *run) tryProviders(ctx workflow.Context, i int, call providerCall, usable []string) (string, map[string]any, time.Time, error) {
	var tried []string
	var held time.Time
	failed := false
	for _, provider := range usable {
		r.waitOn(ctx, i, provider, waiting.Call, "calling "+provider, time.Time{})
		out, err := call(ctx, i, provider)
		r.cost.called(provider)
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
		if r.pastDeadline(ctx) {
			return "", nil, time.Time{}, r.exceeded(i, provider)
		}
		if isType(err, pipeline.ErrTypeRender) {
			return "", nil, time.Time{}, &stepFailure{index: i, provider: provider, msg: rootMessage(err)}
		}
		if until, ok := circuitHeld(err); ok {
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

// awaitCooldown sleeps until a held provider may be tried again, when that is before the step's
// deadline; again says the step should choose again.
func (r *run) awaitCooldown(ctx workflow.Context, i int, until, deadline time.Time) (again bool, err error) {
	if until.IsZero() || until.After(deadline) {
		return false, nil
	}
	if !r.deadline.IsZero() && until.After(r.deadline) {
		return false, r.exceeded(i, "")
	}
	// At least minCooldownWait, so a clock skew between worker and workflow cannot spin the loop.
	d := max(until.Sub(workflow.Now(ctx)), minCooldownWait)
	r.waitOn(ctx, i, "", waiting.ProviderCoolingDown, "every candidate's circuit breaker is open", until)
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

// callOptions turns the step's timeout_seconds and retry into activity options. Transient and
// ambiguous failures are retried up to retry.max_attempts, a vendor's Retry-After replacing
// delay_seconds for that wait; hard ones are not. The schedule-to-close timeout is the time the
// retry policy itself allows (max_attempts calls of timeout_seconds and the delays between them):
// a Retry-After that does not fit in what is left of it ends the attempts on this provider.
func callOptions(st pipeline.Step) workflow.ActivityOptions {
	attempts, delay := defaultCallAttempts, defaultCallDelay
	if st.Retry != nil {
		attempts, delay = st.Retry.MaxAttempts, time.Duration(st.Retry.DelaySeconds)*time.Second
	}
	if delay <= 0 {
		delay = 100 * time.Millisecond // Temporal needs a positive interval; 0 means "at once"
	}
	timeout := time.Duration(st.EffectiveTimeoutSeconds()) * time.Second
	return workflow.ActivityOptions{
		StartToCloseTimeout:    timeout,
		ScheduleToCloseTimeout: time.Duration(attempts)*timeout + time.Duration(attempts-1)*delay,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: delay, BackoffCoefficient: 1, MaximumInterval: delay,
			MaximumAttempts:        int32(attempts),
			NonRetryableErrorTypes: []string{pipeline.ErrTypeRender, pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
	}
}

func (r *run) callSync(ctx workflow.Context, i int, provider string) (map[string]any, error) {
	opts, ok := r.bound(ctx, callOptions(r.schema.Steps[i]))
	if !ok {
		return nil, r.exceeded(i, provider)
	}
	opts.Summary = callSummary("call", r.schema.Steps[i], i, provider)
	actx := workflow.WithActivityOptions(ctx, opts)
	req := r.syncRequest(i, provider)
	var res pipeline.CallResult
	if err := workflow.ExecuteActivity(actx, acts.PipelineCallSync, req).Get(ctx, &res); err != nil {
		return nil, err
	}
	r.cost.took(i, req, res)
	return res.Output, nil
}

// asyncJob is a submitted vendor job of an async_api step: the step's timeout_seconds runs from
// the submit to deadline.
type asyncJob struct {
	step     int
	provider string
	sub      pipeline.SubmitResult
	deadline time.Time
	// status is the job's last known status.
	status string
}

// callAsync submits the job, then polls with durable timers: a worker restart resumes the loop
// from history and never submits the job again. An error from the submit (every retry spent, or
// a hard answer) lets the next candidate try; once the job exists, see pollJob.
func (r *run) callAsync(ctx workflow.Context, i int, provider string) (map[string]any, error) {
	st := r.schema.Steps[i]
	job := asyncJob{step: i, provider: provider}
	timeout := time.Duration(st.EffectiveTimeoutSeconds()) * time.Second
	job.deadline = workflow.Now(ctx).Add(timeout)
	submitOpts := callOptions(st)
	submitOpts.ScheduleToCloseTimeout = timeout // the step's time: a job submitted later could not finish in it
	submitOpts, ok := r.bound(ctx, submitOpts)
	if !ok {
		return nil, r.exceeded(i, provider)
	}
	submitOpts.Summary = callSummary("submit a job to", st, i, provider)
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, submitOpts), acts.PipelineSubmitAsync,
		r.callRequest(i, provider)).Get(ctx, &job.sub); err != nil {
		return nil, err
	}
	job.status = job.sub.Status
	r.job = &job
	defer func() { r.job = nil }()
	if done, out, err := r.decide(job, job.sub.Output); done {
		return out, err
	}
	return r.pollJob(ctx, &job)
}

// pollJob polls a submitted job every interval_seconds until it reports a complete status (its
// output), a failed status (an error: the job is over, the next candidate may run the step), or
// answers polling.max_attempts times without either, or the step's timeout passes; those two end
// the step (a *stepFailure naming the job, whose vendor_task_id stays on the step record for an
// operator to find at the vendor). A status request that fails transiently or ambiguously is
// retried by its activity until the step's deadline (backoff, or the vendor's Retry-After); only
// answered polls count towards max_attempts. A hard answer to a status request ends the step too:
// the next candidate is never tried while the job may still run.
func (r *run) pollJob(ctx workflow.Context, job *asyncJob) (map[string]any, error) {
	st := r.schema.Steps[job.step]
	interval := time.Duration(st.Polling.IntervalSeconds) * time.Second
	callTimeout := min(time.Duration(st.EffectiveTimeoutSeconds())*time.Second, maxPollCallTimeout)
	for answered := 0; answered < st.Polling.MaxAttempts; answered++ {
		// The last wait is shortened to end at the deadline, so interval×max_attempts equal to
		// timeout_seconds (as in the model_pose12 example) still gets its last poll.
		left := job.deadline.Sub(workflow.Now(ctx))
		if left <= 0 {
			return nil, r.jobGivenUp(*job, "")
		}
		wait := min(interval, left)
		r.waitOn(ctx, job.step, job.provider, waiting.Poll, fmt.Sprintf("vendor job %s is %q; poll %d/%d", job.sub.VendorTaskID, job.status,
			answered+1, st.Polling.MaxAttempts), workflow.Now(ctx).Add(wait))
		// The same timer command as workflow.Sleep, with a summary for the Web UI.
		if err := workflow.NewTimerWithOptions(ctx, wait, workflow.TimerOptions{
			Summary: pollTimerSummary(job.step, st, job.sub.VendorTaskID, answered+1)}).Get(ctx, nil); err != nil {
			return nil, err
		}
		opts, ok := r.bound(ctx, pollOptions(job.deadline.Sub(workflow.Now(ctx)), callTimeout, interval))
		if !ok {
			return nil, r.exceeded(job.step, job.provider)
		}
		opts.Summary = callSummary("poll job "+job.sub.VendorTaskID+" at", st, job.step, job.provider)
		pctx := workflow.WithActivityOptions(ctx, opts)
		var poll pipeline.PollResult
		if err := workflow.ExecuteActivity(pctx, acts.PipelinePollAsync, r.pollRequest(*job)).Get(ctx, &poll); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			if r.pastDeadline(ctx) {
				return nil, r.exceeded(job.step, job.provider)
			}
			if isType(err, pipeline.ErrTypeVendorRejected) || isType(err, pipeline.ErrTypeConfig) || isType(err, pipeline.ErrTypeRender) {
				return nil, &stepFailure{index: job.step, provider: job.provider, msg: fmt.Sprintf(
					"status request for vendor task %s refused: %s", job.sub.VendorTaskID, rootMessage(err))}
			}
			return nil, r.jobGivenUp(*job, rootMessage(err))
		}
		job.status = poll.Status
		if done, out, err := r.decide(*job, poll.Output); done {
			return out, err
		}
	}
	return nil, &stepFailure{index: job.step, provider: job.provider, msg: fmt.Sprintf(
		"vendor task %s still %q after %d polls", job.sub.VendorTaskID, job.status, st.Polling.MaxAttempts)}
}

// pollOptions are one status poll's: a call gets callTimeout, and failed calls are retried with
// backoff up to the polling interval (or after the vendor's Retry-After) until the step's
// deadline, left from now; the last poll, due at the deadline, still gets one call.
func pollOptions(left, callTimeout, interval time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    callTimeout,
		ScheduleToCloseTimeout: max(left, callTimeout),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: max(interval, time.Second), MaximumAttempts: 0,
			NonRetryableErrorTypes: []string{pipeline.ErrTypeRender, pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
	}
}

// jobGivenUp is the failure of a step whose job was still running (its last known status) when
// the step's timeout ran out; lastErr is why the last status request failed, if it did.
func (r *run) jobGivenUp(job asyncJob, lastErr string) *stepFailure {
	msg := fmt.Sprintf("vendor task %s still %q when the step's timeout of %ds ran out",
		job.sub.VendorTaskID, job.status, r.schema.Steps[job.step].EffectiveTimeoutSeconds())
	if lastErr != "" {
		msg += "; last status request: " + lastErr
	}
	return &stepFailure{index: job.step, provider: job.provider, msg: msg}
}

func (r *run) pollRequest(job asyncJob) pipeline.PollRequest {
	return pipeline.PollRequest{TaskID: r.in.TaskID, StepIndex: job.step, ProviderRef: job.provider,
		Step: r.schema.Steps[job.step], VendorTaskID: job.sub.VendorTaskID}
}

// decide applies complete_statuses/failed_statuses to the job's last known status. The final output is the mapped status
// response, with fields only the submit response had (vendor_task_id) carried over. A failed
// status is a job_failed error the next candidate may answer.
func (r *run) decide(job asyncJob, polled map[string]any) (bool, map[string]any, error) {
	p, status := r.schema.Steps[job.step].Polling, job.status
	switch {
	case slices.Contains(p.CompleteStatuses, status):
		out := make(map[string]any, len(polled)+len(job.sub.Output))
		for k, v := range job.sub.Output {
			out[k] = v
		}
		for k, v := range polled {
			out[k] = v
		}
		return true, out, nil
	case slices.Contains(p.FailedStatuses, status):
		return true, nil, temporal.NewApplicationError(fmt.Sprintf("vendor task %s reported status %q", job.sub.VendorTaskID, status),
			pipeline.ErrTypeVendorJobFailed)
	}
	return false, nil, nil
}

// runSCF invokes the function and waits up to timeout_seconds for its signed callback, which the
// callback endpoint delivers through the step-callback update. The step is open for its callback
// before the invocation is scheduled, so a fast function's callback is not refused. A failed
// invocation is retried (after the function's Retry-After, if it sent one) within the step's
// timeout.
func (r *run) runSCF(ctx workflow.Context, i int) (map[string]any, error) {
	st := r.schema.Steps[i]
	timeout := time.Duration(st.EffectiveTimeoutSeconds()) * time.Second
	opts, ok := r.bound(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    invokeTimeout,
		ScheduleToCloseTimeout: max(timeout, invokeTimeout),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{pipeline.ErrTypeRender, pipeline.ErrTypeVendorRejected, pipeline.ErrTypeConfig}},
		Summary: fmt.Sprintf("invoke %s for step %d %s", st.SCFFunction, i+1, st.Name),
	})
	if !ok {
		return nil, r.exceeded(i, "")
	}
	actx := workflow.WithActivityOptions(ctx, opts)
	r.waitOn(ctx, i, "", waiting.Call, "invoking "+st.SCFFunction, time.Time{})
	r.scf.open(i)
	defer r.scf.close()
	var inv pipeline.InvokeResult
	if err := workflow.ExecuteActivity(actx, acts.PipelineInvokeSCF, r.callRequest(i, "")).Get(ctx, &inv); err != nil {
		if ctx.Err() == nil && r.pastDeadline(ctx) {
			return nil, r.exceeded(i, "")
		}
		return nil, &stepFailure{index: i, msg: fmt.Sprintf("invoke %s: %s", st.SCFFunction, rootMessage(err))}
	}
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
