package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// fakeActs stands in for activities/pipeline: it records calls and answers from the test's funcs.
type fakeActs struct {
	schema   pipeline.Schema // what the admission resolves
	admitErr error
	mu       sync.Mutex
	calls    []string
	finished []pipeline.FinishStepRequest
	task     pipeline.FinishTaskRequest
	refunds  int
	usable   []string
	// choose, when set, answers the provider choice instead of usable.
	choose func(req pipeline.ChooseRequest) *pipeline.ChooseResult
	sync   func(req pipeline.CallRequest) (*pipeline.CallResult, error)
	submit func(req pipeline.CallRequest) (*pipeline.SubmitResult, error)
	poll   func(req pipeline.PollRequest) (*pipeline.PollResult, error)
	// onFinish, when set, is called when the task is finished (by the workflow or the last sync step).
	onFinish func()
}

func (f *fakeActs) finishedTask(r pipeline.FinishTaskRequest) {
	f.mu.Lock()
	f.task = r
	if r.FailedStep != nil { // recorded with the end, as pipeline.EndTask does
		f.finished = append(f.finished, *r.FailedStep)
	}
	if r.Refund {
		f.refunds++
	}
	f.mu.Unlock()
	if f.onFinish != nil {
		f.onFinish()
	}
}

func (f *fakeActs) log(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

// register registers the workflows and activities as the worker does and answers every activity
// from f.
func (f *fakeActs) register(env *testsuite.TestWorkflowEnvironment) {
	var a *pipelineact.Activities // mocked below: never called
	Register(env, a)
	on := func(fn any, answer any) {
		env.OnActivity(fn, mock.Anything, mock.Anything).Return(answer)
	}
	on(a.PipelineAdmitTask, func(_ context.Context, r pipeline.AdmitRequest) (*pipeline.AdmitResult, error) {
		f.log("admit")
		if f.admitErr != nil {
			return nil, f.admitErr
		}
		return &pipeline.AdmitResult{Pipeline: r.Pipeline, Version: "1.0.0", Schema: f.schema}, nil
	})
	on(a.PipelineChooseProviders, func(_ context.Context, r pipeline.ChooseRequest) (*pipeline.ChooseResult, error) {
		if f.choose != nil {
			return f.choose(r), nil
		}
		return &pipeline.ChooseResult{Usable: f.usable, Skipped: []string{"x (down)"}}, nil
	})
	on(a.PipelineCallSync, func(_ context.Context, r pipeline.CallRequest) (*pipeline.CallResult, error) {
		f.log("sync:" + r.ProviderRef)
		res, err := f.sync(r)
		if err == nil && r.Sync != nil && r.Sync.Finish != nil { // the last step finishes the task
			f.finishedTask(*r.Sync.Finish)
		}
		return res, err
	})
	on(a.PipelineSubmitAsync, func(_ context.Context, r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
		f.log("submit:" + r.ProviderRef)
		return f.submit(r)
	})
	on(a.PipelinePollAsync, func(_ context.Context, r pipeline.PollRequest) (*pipeline.PollResult, error) {
		f.log("poll:" + r.ProviderRef)
		return f.poll(r)
	})
	on(a.PipelineInvokeSCF, func(_ context.Context, r pipeline.CallRequest) (*pipeline.InvokeResult, error) {
		f.log("invoke")
		return &pipeline.InvokeResult{}, nil
	})
	on(a.PipelineFinishStep, func(_ context.Context, r pipeline.FinishStepRequest) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.finished = append(f.finished, r)
		return nil
	})
	on(a.PipelineFinishTask, func(_ context.Context, r pipeline.FinishTaskRequest) error {
		f.finishedTask(r)
		return nil
	})
}

func syncStep(name string, attempts int) pipeline.Step {
	return pipeline.Step{Name: name, Type: pipeline.StepSyncAPI, ProviderCandidates: []string{"a", "b"}, Endpoint: "/x",
		InputMapping: map[string]any{}, OutputMapping: map[string]string{"u": "$.u"}, TimeoutSeconds: 5,
		Retry: &pipeline.Retry{MaxAttempts: attempts, DelaySeconds: 1}}
}

// testInput is a task whose admission resolves Schema.
type testInput struct {
	TaskID string
	Schema pipeline.Schema
}

func execute(t *testing.T, f *fakeActs, in testInput, during func(env *testsuite.TestWorkflowEnvironment)) (*testsuite.TestWorkflowEnvironment, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f.schema = in.Schema
	f.register(env)
	if during != nil {
		during(env)
	}
	env.ExecuteWorkflow(PipelineWorkflow, Input{TaskID: in.TaskID, Pipeline: "p", RequestHash: "h"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	return env, env.GetWorkflowError()
}

func TestFallsThroughToNextProviderAfterRetries(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		if r.ProviderRef == "a" {
			return nil, vendorErr(pipeline.ClassTransient, "a answered 503", 0)
		}
		return &pipeline.CallResult{ProviderRef: "b", Output: map[string]any{"u": "ok"}}, nil
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 3)}}}
	if _, err := execute(t, f, in, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a,sync:a,sync:a,sync:b" {
		t.Fatalf("calls %s", got)
	}
	// The sync call records its own step; the workflow only finishes the task (and settles).
	if len(f.finished) != 0 || f.task.Status != pipeline.StatusSuccess || f.task.Refund {
		t.Fatalf("finished %+v task %+v", f.finished, f.task)
	}
}

func TestRenderErrorStopsWithoutFallthroughAndRefundsOnce(t *testing.T) {
	f := &fakeActs{usable: []string{"a", "b"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return nil, temporal.NewNonRetryableApplicationError(`input_mapping: ${input_data.x}: input_data has no field "x"`, pipeline.ErrTypeRender, nil)
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("first", 3), syncStep("second", 1)}}}
	_, err := execute(t, f, in, nil)
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != ErrTypeStepFailed {
		t.Fatalf("want %s, got %v", ErrTypeStepFailed, err)
	}
	if got := strings.Join(f.calls, ","); got != "admit,sync:a" {
		t.Fatalf("calls %s", got)
	}
	if !strings.HasPrefix(f.task.ErrorReason, `Step "first" failed: input_mapping: ${input_data.x}`) || f.refunds != 1 {
		t.Fatalf("task %+v refunds %d", f.task, f.refunds)
	}
}

func TestNoUsableProviderFailsWithReason(t *testing.T) {
	f := &fakeActs{}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{OnFailure: pipeline.OnFailureNoRefund, Steps: []pipeline.Step{syncStep("only", 1)}}}
	if _, err := execute(t, f, in, nil); err == nil {
		t.Fatal("want failure")
	}
	if f.task.ErrorReason != `Step "only" failed: all providers unavailable: x (down)` || f.refunds != 0 || len(f.calls) != 1 {
		t.Fatalf("task %+v refunds %d calls %v", f.task, f.refunds, f.calls)
	}
}

func asyncStep() pipeline.Step {
	return pipeline.Step{Name: "gen", Type: pipeline.StepAsyncAPI, ProviderCandidates: []string{"a", "b"}, Endpoint: "/submit",
		InputMapping: map[string]any{}, OutputMapping: map[string]string{"status": "$.status", "vendor_task_id": "$.id"},
		TimeoutSeconds: 600, Polling: &pipeline.Polling{StatusEndpoint: "/s/{vendor_task_id}", IntervalSeconds: 10, MaxAttempts: 5,
			CompleteStatuses: []string{"success"}, FailedStatuses: []string{"failed"}}}
}

func TestAsyncGivesUpAfterMaxAttempts(t *testing.T) {
	f := &fakeActs{usable: []string{"a"},
		submit: func(r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
			return &pipeline.SubmitResult{VendorTaskID: "v1", Status: "queued"}, nil
		},
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			return &pipeline.PollResult{Status: "processing"}, nil
		}}
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep()}}}, nil); err == nil {
		t.Fatal("want failure")
	}
	if f.task.ErrorReason != `Step "gen" failed: vendor task v1 still "processing" after 5 polls` {
		t.Fatalf("task %+v", f.task)
	}
}

func scfStep(timeout int) pipeline.Step {
	return pipeline.Step{Name: "compose", Type: pipeline.StepSCF, SCFFunction: "video-compositor", InputMapping: map[string]any{},
		OutputMapping: map[string]string{"video_url": "$.output.video_url"}, TimeoutSeconds: timeout}
}

// deliver sends a step-callback update and records whether the validator refused it (the
// refusal's error type) or it was accepted ("").
func deliver(env *testsuite.TestWorkflowEnvironment, got *[]string, cb pipeline.CallbackDelivery) {
	env.UpdateWorkflow(UpdateStepCallback, "", &testsuite.TestUpdateCallback{
		OnAccept: func() { *got = append(*got, "") },
		OnReject: func(err error) {
			var ae *temporal.ApplicationError
			errors.As(err, &ae)
			*got = append(*got, ae.Type())
		},
		OnComplete: func(any, error) {},
	}, cb)
}

// The callback update's validator accepts exactly the first callback of the waiting step.
func TestSCFCallbackUpdateMatrix(t *testing.T) {
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return &pipeline.CallResult{Output: map[string]any{"u": "x"}}, nil
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{scfStep(600), scfStep(600), syncStep("last", 1)}}}
	var got []string
	body := func(url string) map[string]any {
		return map[string]any{"status": "success", "output": map[string]any{"video_url": url}}
	}
	env, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			v, err := env.QueryWorkflow(QueryState)
			var st State
			if err != nil || v.Get(&st) != nil || st.CurrentStep != 0 || st.StepStatus[0] != pipeline.StatusProcessing {
				t.Errorf("state query while waiting: %+v %v", st, err)
			}
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 7, Status: "success"})                  // no such step
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 1, Status: "success"})                  // not waiting yet
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 0, Status: "success", Body: body("a")}) // good
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 0, Status: "success", Body: body("b")}) // replayed
		}, time.Minute)
		env.RegisterDelayedCallback(func() {
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 0, Status: "success", Body: body("c")}) // stale
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 1, Status: "success", Body: body("v.mp4")})
		}, 2*time.Minute)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{pipeline.ErrTypeStepNotFound, pipeline.ErrTypeStepNotWaiting, "", pipeline.ErrTypeCallbackDelivered,
		pipeline.ErrTypeCallbackDelivered, ""}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("update answers %q, want %q", got, want)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Outputs[0]["video_url"] != "a" || res.Outputs[1]["video_url"] != "v.mp4" {
		t.Fatalf("result %+v %v", res, err)
	}
}

// A callback for a step the pipeline has left is stale.
func TestSCFCallbackForALeftStepIsStale(t *testing.T) {
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return &pipeline.CallResult{Output: map[string]any{"u": "x"}}, nil
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("first", 1), scfStep(600)}}}
	var got []string
	_, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 0, Status: "success"})
			deliver(env, &got, pipeline.CallbackDelivery{StepIndex: 1, Status: "success", Body: map[string]any{}})
		}, time.Minute)
	})
	if err != nil || strings.Join(got, ",") != pipeline.ErrTypeCallbackStale+"," {
		t.Fatalf("answers %q err %v", got, err)
	}
}

// A refused admission ends the run with the refusal and runs nothing.
func TestRefusedAdmissionRunsNothing(t *testing.T) {
	f := &fakeActs{admitErr: temporal.NewNonRetryableApplicationError("no units", pipeline.ErrTypeQuotaExhausted, nil)}
	_, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{syncStep("s", 1)}}}, nil)
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeQuotaExhausted || strings.Join(f.calls, ",") != "admit" || f.task.TaskID != "" {
		t.Fatalf("err %v calls %v task %+v", err, f.calls, f.task)
	}
}

func TestSCFTimesOutWithoutCallback(t *testing.T) {
	f := &fakeActs{}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{scfStep(30)}}}
	if _, err := execute(t, f, in, nil); err == nil {
		t.Fatal("want failure")
	}
	if f.task.ErrorReason != `Step "compose" failed: no callback from video-compositor within 30s` || f.refunds != 1 {
		t.Fatalf("task %+v refunds %d", f.task, f.refunds)
	}
}

func TestMaxExecutionTimeBoundsTheRun(t *testing.T) {
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		return &pipeline.CallResult{Output: map[string]any{"u": "x"}}, nil
	}}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{MaxExecutionTime: 100, Steps: []pipeline.Step{syncStep("quick", 1), scfStep(90), scfStep(90)}}}
	in.Schema.Steps[2].Name = "compose2"
	_, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflowNoRejection(UpdateStepCallback, "", t, pipeline.CallbackDelivery{StepIndex: 1, Status: "success", Body: map[string]any{}})
		}, 60*time.Second)
	})
	if err == nil || f.task.ErrorReason != `Step "compose2" failed: pipeline exceeded max_execution_time of 100s` {
		t.Fatalf("err %v task %+v", err, f.task)
	}
}

func TestCancelledPipelineFailsTaskAndRefunds(t *testing.T) {
	f := &fakeActs{}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{scfStep(600)}}}
	_, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	})
	if !temporal.IsCanceledError(err) {
		t.Fatalf("want cancelled, got %v", err)
	}
	if f.task.ErrorReason != `Step "compose" failed: pipeline was cancelled` || f.refunds != 1 || f.finished[0].Status != pipeline.StatusFailed {
		t.Fatalf("task %+v refunds %d steps %+v", f.task, f.refunds, f.finished)
	}
}

// With interval×max_attempts equal to timeout_seconds (10 s × 60 = 600 s, as the model_pose12
// example sets them), every poll happens and the step fails for max_attempts, not for the timeout;
// a shorter timeout cuts it.
func TestAsyncPollBudgetFillsTheStepTimeout(t *testing.T) {
	polls := 0
	f := &fakeActs{usable: []string{"a"},
		submit: func(r pipeline.CallRequest) (*pipeline.SubmitResult, error) {
			return &pipeline.SubmitResult{VendorTaskID: "v1", Status: "queued"}, nil
		},
		poll: func(r pipeline.PollRequest) (*pipeline.PollResult, error) {
			polls++
			return &pipeline.PollResult{Status: "processing"}, nil
		}}
	st := asyncStep()
	st.Polling.MaxAttempts, st.TimeoutSeconds = 60, 600
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{st}}}, nil); err == nil {
		t.Fatal("want failure")
	}
	if polls != 60 || f.task.ErrorReason != `Step "gen" failed: vendor task v1 still "processing" after 60 polls` {
		t.Fatalf("polls %d reason %q", polls, f.task.ErrorReason)
	}
	polls = 0
	st.TimeoutSeconds = 95
	if _, err := execute(t, f, testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{st}}}, nil); err == nil {
		t.Fatal("want failure")
	}
	if polls != 10 || f.task.ErrorReason != `Step "gen" failed: vendor task v1 still "processing" when the step's timeout of 95s ran out` {
		t.Fatalf("polls %d reason %q", polls, f.task.ErrorReason)
	}
}

// A health check lost with its worker must not hold the schedule for the whole start-to-close
// timeout: the activity heartbeats per provider and times out on a missed heartbeat.
func TestProviderHealthCheckHasAHeartbeatTimeout(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *pipelineact.Activities
	Register(env, a)
	env.OnActivity(a.PipelineCheckProviderHealth, mock.Anything).Return(&pipeline.HealthReport{Checked: 1}, nil)
	var heartbeat time.Duration
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		heartbeat = info.HeartbeatTimeout
	})
	env.ExecuteWorkflow(ProviderHealthWorkflow)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if heartbeat <= 0 || heartbeat > 30*time.Second {
		t.Fatalf("health check heartbeat timeout = %s, want a short one", heartbeat)
	}
}

// A run of sync steps: the provider choice is a local activity for the first
// step only (each step's activity chooses for the next), the last step's activity finishes the
// task (no finish local activity), and max_execution_time bounds the activities instead of a
// timer.
func TestCostFloorSyncSteps(t *testing.T) {
	var mu sync.Mutex
	chosen := 0
	var reqs []pipeline.CallRequest
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		mu.Lock()
		reqs = append(reqs, r)
		mu.Unlock()
		res := &pipeline.CallResult{ProviderRef: "a", Output: map[string]any{"u": "ok"}}
		if r.Sync != nil && len(r.Sync.NextCandidates) > 0 {
			res.Next = &pipeline.ChooseResult{Usable: []string{"a"}}
		}
		return res, nil
	}}
	f.choose = func(pipeline.ChooseRequest) *pipeline.ChooseResult {
		mu.Lock()
		defer mu.Unlock()
		chosen++
		return &pipeline.ChooseResult{Usable: []string{"a"}}
	}
	in := testInput{TaskID: "t", Schema: pipeline.Schema{MaxExecutionTime: 60, Steps: []pipeline.Step{syncStep("s0", 1), syncStep("s1", 1), syncStep("s2", 1)}}}
	timers := 0
	if _, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	}); err != nil {
		t.Fatal(err)
	}
	if chosen != 1 || len(reqs) != 3 || timers != 0 {
		t.Fatalf("choices %d, calls %d, timers %d", chosen, len(reqs), timers)
	}
	if reqs[2].Sync == nil || reqs[2].Sync.Finish == nil || reqs[0].Sync.Finish != nil || f.task.Status != pipeline.StatusSuccess {
		t.Fatalf("finish %+v task %+v", reqs[2].Sync, f.task)
	}
}
