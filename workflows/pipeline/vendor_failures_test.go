package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// The vendor-failure rules of the workflow (docs/pipelines.md "Vendor failures"): failures are retried by
// class, a Retry-After replaces the retry delay, and a submitted job is polled until it finishes,
// fails, or the step's budget (max_attempts answered polls, timeout_seconds) is spent.

// vendorErr is an activity error as vendorhttp returns it: typed by class, with the vendor's
// Retry-After as the next retry delay.
func vendorErr(class pipeline.ErrorClass, msg string, retryAfter time.Duration) error {
	return temporal.NewApplicationErrorWithOptions(msg, class.ErrType(),
		temporal.ApplicationErrorOptions{NonRetryable: !class.Retryable(), NextRetryDelay: retryAfter})
}

// clock hands the activity fakes the test environment's (skipping) clock.
type clock struct {
	env *testsuite.TestWorkflowEnvironment
}

func (c *clock) during(env *testsuite.TestWorkflowEnvironment) { c.env = env }
func (c *clock) now() time.Time                                { return c.env.Now() }

func submitted(r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
	id := "v-" + r.ProviderRef
	return &pipeline.SubmitResult{ProviderRef: r.ProviderRef, VendorTaskID: id, Status: "queued", Output: map[string]any{"vendor_task_id": id}}, nil
}

// A status endpoint that fails (transient, Retry-After, ambiguous) between answers keeps the same
// job: one submit, the poll retried after the Retry-After, success in the end.
func TestAsyncPollFailuresKeepTheJob(t *testing.T) {
	var c clock
	answers := []func() (*pipeline.PollResult, error){
		func() (*pipeline.PollResult, error) {
			return nil, vendorErr(pipeline.ClassTransient, "a answered 503", 0)
		},
		func() (*pipeline.PollResult, error) { return &pipeline.PollResult{Status: "running"}, nil },
		func() (*pipeline.PollResult, error) {
			return nil, vendorErr(pipeline.ClassTransient, "a answered 429 (Retry-After 30)", 30*time.Second)
		},
		func() (*pipeline.PollResult, error) {
			return nil, vendorErr(pipeline.ClassAmbiguous, "a answered 500", 0)
		},
		func() (*pipeline.PollResult, error) { return &pipeline.PollResult{Status: "success"}, nil },
	}
	var at []time.Time
	f := &fakeActs{usable: []string{"a", "b"}, submit: submitted,
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			at = append(at, c.now())
			if r.VendorTaskID != "v-a" {
				t.Errorf("polled %s", r.VendorTaskID)
			}
			return answers[len(at)-1]()
		}}
	env, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, c.during)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,submit:a,poll:a,poll:a,poll:a,poll:a,poll:a" {
		t.Fatalf("calls %s", got)
	}
	if wait := at[3].Sub(at[2]); wait < 30*time.Second {
		t.Fatalf("polled %s after a Retry-After of 30s", wait)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Outputs[0]["vendor_task_id"] != "v-a" {
		t.Fatalf("result %+v %v", res, err)
	}
}

// A status endpoint that never answers again (503, Retry-After 15; the test environment caps an
// unlimited retry policy at 10 attempts, so the waits are long): the status is asked for until the
// step's timeout, which then ends the step naming the job (its vendor_task_id stays on the step
// record); no second job is submitted anywhere.
func TestAsyncStatusOutageGivesUpAtTheTimeoutKeepingTheJob(t *testing.T) {
	var c clock
	var first, last time.Time
	f := &fakeActs{usable: []string{"a", "b"}, submit: submitted,
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			if first.IsZero() {
				first = c.now()
			}
			last = c.now()
			return nil, vendorErr(pipeline.ClassTransient, "a answered 503 (Retry-After 15)", 15*time.Second)
		}}
	st := asyncStep()
	st.TimeoutSeconds = 120
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{st}}}, c.during); err == nil {
		t.Fatal("want failure")
	}
	want := `Step "gen" failed: vendor task v-a still "queued" when the step's timeout of 120s ran out; last status request: a answered 503 (Retry-After 15)`
	if f.task.ErrorReason != want {
		t.Fatalf("reason %q", f.task.ErrorReason)
	}
	for _, call := range f.calls {
		if call == "submit:b" || call == "poll:b" {
			t.Fatalf("the next candidate was tried while the job may still run: %v", f.calls)
		}
	}
	if polled := last.Sub(first); polled < 100*time.Second {
		t.Fatalf("polled for %s of the step's 120s", polled)
	}
	if len(f.finished) != 1 || f.finished[0].ProviderRef != "a" || f.finished[0].Status != pipeline.StatusFailed {
		t.Fatalf("finished %+v", f.finished)
	}
}

// A hard answer to a status request ends the step (the job may still run: no second job).
func TestAsyncHardStatusAnswerEndsTheStep(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, submit: submitted,
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			return nil, vendorErr(pipeline.ClassHard, "a answered 403: forbidden", 0)
		}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, nil); err == nil {
		t.Fatal("want failure")
	}
	if got := strings.Join(f.calls, ","); got != "admit,submit:a,poll:a" {
		t.Fatalf("calls %s", got)
	}
	if f.task.ErrorReason != `Step "gen" failed: status request for vendor task v-a refused: a answered 403: forbidden` {
		t.Fatalf("reason %q", f.task.ErrorReason)
	}
}

// A job that reports a failed status is over: the next candidate runs the step.
func TestAsyncJobFailedHandsTheStepToTheNextCandidate(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, submit: submitted,
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			if r.ProviderRef == "a" {
				return &pipeline.PollResult{Status: "failed"}, nil
			}
			return &pipeline.PollResult{Status: "success"}, nil
		}}
	env, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,submit:a,poll:a,submit:b,poll:b" {
		t.Fatalf("calls %s", got)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Outputs[0]["vendor_task_id"] != "v-b" {
		t.Fatalf("result %+v %v", res, err)
	}
	// With no candidate left, the reason names the failed job.
	f = &fakeActs{usable: []string{"a"}, submit: submitted,
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			return &pipeline.PollResult{Status: "failed"}, nil
		}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, nil); err == nil {
		t.Fatal("want failure")
	}
	if f.task.ErrorReason != `Step "gen" failed: every provider failed (a: vendor task v-a reported status "failed")` {
		t.Fatalf("reason %q", f.task.ErrorReason)
	}
}

// A failed submit (its retries spent) hands the step to the next candidate, as before.
func TestAsyncSubmitFailureFallsThrough(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"},
		submit: func(r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
			if r.ProviderRef == "a" {
				return nil, vendorErr(pipeline.ClassTransient, "a answered 503", 0)
			}
			return submitted(r)
		},
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			return &pipeline.PollResult{Status: "success"}, nil
		}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,submit:a,submit:a,submit:b,poll:b" {
		t.Fatalf("calls %s", got)
	}
}

// A sync call answered 429 with Retry-After is retried that much later; a primary that always
// answers 429 is called retry.max_attempts times, then the backup once.
func TestSyncRetryAfterAndAlways429Primary(t *testing.T) {
	var c clock
	var at []time.Time
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if r.ProviderRef == "a" {
			at = append(at, c.now())
			return nil, vendorErr(pipeline.ClassTransient, "a answered 429 (Retry-After 3)", 3*time.Second)
		}
		return &pipeline.CallResult{ProviderRef: "b", Output: map[string]any{"u": "ok"}}, nil
	}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 3)}}}, c.during); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a,sync:a,sync:a,sync:b" {
		t.Fatalf("calls %s", got)
	}
	for i := 1; i < len(at); i++ {
		if wait := at[i].Sub(at[i-1]); wait < 3*time.Second {
			t.Fatalf("retry %d came %s after a Retry-After of 3s", i, wait)
		}
	}
}

// A Retry-After longer than the time the step's retry policy gives a provider (here 3 calls of
// 5 s and 2 delays of 1 s) ends the attempts on it at once: the backup serves.
func TestSyncRetryAfterBeyondTheStepBudgetMovesOn(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if r.ProviderRef == "a" {
			return nil, vendorErr(pipeline.ClassTransient, "a answered 503 (Retry-After 600)", 10*time.Minute)
		}
		return &pipeline.CallResult{ProviderRef: "b", Output: map[string]any{"u": "ok"}}, nil
	}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 3)}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a,sync:b" {
		t.Fatalf("calls %s", got)
	}
	if o := callOptions(syncStep("s0", 3)); o.ScheduleToCloseTimeout != 17*time.Second {
		t.Fatalf("schedule-to-close %s", o.ScheduleToCloseTimeout)
	}
}

// Hard sync answers are not retried; ambiguous ones are, within max_attempts.
func TestSyncRetriesByClass(t *testing.T) {
	for class, want := range map[pipeline.ErrorClass]string{
		pipeline.ClassHard:      "admit,sync:a,sync:b",
		pipeline.ClassAmbiguous: "admit,sync:a,sync:a,sync:a,sync:b",
		pipeline.ClassTransient: "admit,sync:a,sync:a,sync:a,sync:b",
	} {
		f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
			if r.ProviderRef == "a" {
				return nil, vendorErr(class, "a failed", 0)
			}
			return &pipeline.CallResult{ProviderRef: "b", Output: map[string]any{"u": "ok"}}, nil
		}}
		_, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 3)}}}, nil)
		var ae *temporal.ApplicationError
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("%s: %v", class, err)
		}
		if got := strings.Join(f.calls, ","); got != want || err != nil {
			t.Errorf("%s: calls %s err %v", class, got, err)
		}
	}
}
