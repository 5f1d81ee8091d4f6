package pipeline

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// max_execution_time ends the run at its deadline whatever the running step waits for: the
// shape of the case that failed late (a 4 s sync step, then a step whose own timeout is as long
// as the whole budget), one per step type of the second step. The clock is the test
// environment's, so "on time" is exact: the task is finished at start + max_execution_time.

// deadlineCase runs a pipeline of max_execution_time 8: step 0 is a sync step that takes 4 s (its
// first call answers 503 with a Retry-After of 4 s), then second. It returns when the task was
// finished, from the run's start; rest are further steps, never reached.
func deadlineCase(t *testing.T, f *fakeActs, second pipeline.Step, rest ...pipeline.Step) time.Duration {
	t.Helper()
	var c clock
	var start, finished time.Time
	slowFirst := f.sync
	f.sync = func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if r.StepIndex == 0 {
			if c.now().Sub(start) < 4*time.Second {
				return nil, vendorErr(pipeline.ClassTransient, "a answered 503 (Retry-After 4)", 4*time.Second)
			}
			res := &pipeline.CallResult{ProviderRef: r.ProviderRef, Output: map[string]any{"u": "ok"}}
			if r.Sync != nil && len(r.Sync.NextCandidates) > 0 {
				res.Next = &pipeline.ChooseResult{Usable: []string{"a"}}
			}
			return res, nil
		}
		return slowFirst(r)
	}
	first := syncStep("first", 3)
	in := testInput{TaskID: "t", Schema: pipeline.Schema{MaxExecutionTime: 8, Steps: append([]pipeline.Step{first, second}, rest...)}}
	_, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		c.during(env)
		start = env.Now()
		f.onFinish = func() { finished = c.now() }
	})
	if err == nil {
		t.Fatal("the run succeeded; want it failed by max_execution_time")
	}
	want := `Step "` + second.Name + `" failed: pipeline exceeded max_execution_time of 8s`
	if !strings.HasPrefix(f.task.ErrorReason, want) {
		t.Fatalf("reason %q, want it to start with %q", f.task.ErrorReason, want)
	}
	return finished.Sub(start)
}

func TestDeadlineEndsAnAsyncPollOnTime(t *testing.T) {
	f := &fakeActs{usable: []string{"a"},
		submit: func(r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
			return &pipeline.SubmitResult{ProviderRef: r.ProviderRef, VendorTaskID: "v1", Status: "queued",
				Output: map[string]any{"vendor_task_id": "v1"}}, nil
		},
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			return &pipeline.PollResult{Status: "processing"}, nil
		}}
	st := asyncStep()
	st.TimeoutSeconds, st.Polling.IntervalSeconds, st.Polling.MaxAttempts = 8, 3, 10
	if took := deadlineCase(t, f, st); took != 8*time.Second {
		t.Fatalf("finished %s after the start, want 8s", took)
	}
	// The paid job the deadline left running is named on the step and the task.
	last := f.finished[len(f.finished)-1]
	if last.StepIndex != 1 || last.ProviderRef != "a" || !strings.Contains(last.ErrorMessage, "vendor task v1") ||
		!strings.Contains(f.task.ErrorReason, "vendor task v1") {
		t.Fatalf("step %+v task %q", last, f.task.ErrorReason)
	}
}

func TestDeadlineEndsAnSCFWaitOnTime(t *testing.T) {
	f := &fakeActs{usable: []string{"a"}}
	st := scfStep(8)
	if took := deadlineCase(t, f, st); took != 8*time.Second {
		t.Fatalf("finished %s after the start, want 8s", took)
	}
}

// A sync step retried on Retry-After (its vendor keeps answering 503, so only its retry budget
// of 20 × 8 s would end it) in a pipeline that also waits for a callback (so the
// deadline is a timer).
func TestDeadlineEndsARetryingSyncStepOnTime(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return nil, vendorErr(pipeline.ClassTransient, r.ProviderRef+" answered 503 (Retry-After 1)", time.Second)
	}}
	st := syncStep("second", 20)
	st.TimeoutSeconds = 8
	if took := deadlineCase(t, f, st, scfStep(60)); took != 8*time.Second {
		t.Fatalf("finished %s after the start, want 8s", took)
	}
}

// Sync steps only have no max_execution_time timer: their activities' timeouts end at the
// deadline, and the call that fails there fails the task on time as well.
func TestDeadlineEndsAllSyncStepsOnTime(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return nil, vendorErr(pipeline.ClassTransient, r.ProviderRef+" answered 503 (Retry-After 1)", time.Second)
	}}
	st := syncStep("second", 20)
	st.TimeoutSeconds = 8
	if took := deadlineCase(t, f, st); took != 8*time.Second {
		t.Fatalf("finished %s after the start, want 8s", took)
	}
}
