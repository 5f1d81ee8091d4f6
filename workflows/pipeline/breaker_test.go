package pipeline

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskloom/taskloom/internal/pipeline"
)

func singleCandidate(timeout int) pipeline.Step {
	st := syncStep("s0", 2)
	st.ProviderCandidates, st.TimeoutSeconds = []string{"a"}, timeout
	return st
}

func circuitOpen(until time.Time) error {
	return temporal.NewNonRetryableApplicationError("circuit open until "+until.Format(time.RFC3339), pipeline.ErrTypeCircuitOpen, nil, until)
}

// A single-candidate step whose provider's breaker is open waits for the cooldown (one timer),
// chooses again and is served: no call is made while the breaker holds the provider.
func TestStepWaitsForTheCooldownOfItsOnlyProvider(t *testing.T) {
	var env *testsuite.TestWorkflowEnvironment
	var chosen atomic.Int32
	var waited time.Duration
	var start time.Time
	f := &fakeActs{sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		waited = env.Now().Sub(start)
		return &pipeline.CallResult{ProviderRef: "a", Output: map[string]any{"u": "ok"}}, nil
	}}
	f.choose = func(pipeline.ChooseRequest) *pipeline.ChooseResult {
		if chosen.Add(1) == 1 {
			start = env.Now()
			return &pipeline.ChooseResult{Skipped: []string{"a (circuit open)"}, WaitUntil: env.Now().Add(40 * time.Second)}
		}
		return &pipeline.ChooseResult{Usable: []string{"a"}}
	}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{singleCandidate(120)}}}
	if _, err := execute(t, f, in, func(e *testsuite.TestWorkflowEnvironment) { env = e }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a" || chosen.Load() != 2 {
		t.Fatalf("calls %s, %d choices", got, chosen.Load())
	}
	if waited < 40*time.Second {
		t.Fatalf("called after %s, before the cooldown ended", waited)
	}
}

// The call whose failure opened the breaker comes back as ErrTypeCircuitOpen: the step waits for
// the cooldown instead of failing, then the provider (recovered) serves.
func TestStepWaitsWhenItsCallOpenedTheBreaker(t *testing.T) {
	var env *testsuite.TestWorkflowEnvironment
	var n atomic.Int32
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if n.Add(1) == 1 {
			return nil, circuitOpen(env.Now().Add(30 * time.Second))
		}
		return &pipeline.CallResult{ProviderRef: "a", Output: map[string]any{"u": "ok"}}, nil
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{singleCandidate(120)}}}
	if _, err := execute(t, f, in, func(e *testsuite.TestWorkflowEnvironment) { env = e }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a,sync:a" {
		t.Fatalf("calls %s", got)
	}
}

// A cooldown that ends after the step's timeout is not waited for: the step fails at once, naming
// the breaker.
func TestCooldownBeyondTheStepTimeoutFails(t *testing.T) {
	var env *testsuite.TestWorkflowEnvironment
	f := &fakeActs{}
	f.choose = func(pipeline.ChooseRequest) *pipeline.ChooseResult {
		until := env.Now().Add(10 * time.Minute)
		return &pipeline.ChooseResult{Skipped: []string{"a (circuit open until " + until.Format(time.RFC3339) + ")"}, WaitUntil: until}
	}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{singleCandidate(60)}}}
	if _, err := execute(t, f, in, func(e *testsuite.TestWorkflowEnvironment) { env = e }); err == nil {
		t.Fatal("the step did not fail")
	}
	if !strings.Contains(f.task.ErrorReason, "all providers unavailable: a (circuit open until") || strings.Join(f.calls, ",") != "admit" {
		t.Fatalf("reason %q calls %v", f.task.ErrorReason, f.calls)
	}
}

// When one candidate really failed and the other was held by its breaker, the step fails as
// before (it does not wait to try the failed one again).
func TestRealFailureBesideAHeldProviderFailsTheStep(t *testing.T) {
	var env *testsuite.TestWorkflowEnvironment
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if r.ProviderRef == "a" {
			return nil, circuitOpen(env.Now().Add(10 * time.Second))
		}
		return nil, temporal.NewNonRetryableApplicationError("b answered 400", pipeline.ErrTypeVendorRejected, nil)
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 1)}}}
	if _, err := execute(t, f, in, func(e *testsuite.TestWorkflowEnvironment) { env = e }); err == nil {
		t.Fatal("the step did not fail")
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a,sync:b" {
		t.Fatalf("calls %s", got)
	}
	if !strings.Contains(f.task.ErrorReason, "every provider failed (a: circuit open until") {
		t.Fatalf("reason %q", f.task.ErrorReason)
	}
}
