package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// A redrive run does not admit: it continues from the step the redrive admission names, with the
// earlier steps' outputs, and its vendor calls carry the redrive count.
func TestRedriveRunContinuesFromItsStep(t *testing.T) {
	var calls []pipeline.CallRequest
	f := &fakeActs{usable: []string{"a"}, sync: func(r pipeline.CallRequest) (*pipeline.CallResult, error) {
		calls = append(calls, r)
		return &pipeline.CallResult{ProviderRef: "a", Output: map[string]any{"u": fmt.Sprint("out", r.StepIndex)}}, nil
	}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f.register(env)
	var a *pipelineact.Activities
	schema := pipeline.Schema{Steps: []pipeline.Step{syncStep("s0", 1), syncStep("s1", 1), syncStep("s2", 1)}}
	env.OnActivity(a.PipelineRedriveTask, mock.Anything, mock.Anything).Return(func(_ context.Context, r pipeline.RedriveRequest) (*pipeline.RedriveResult, error) {
		if r.RedriveID != "key:1" || r.TaskID != "t" {
			return nil, fmt.Errorf("redrive request %+v", r)
		}
		return &pipeline.RedriveResult{Pipeline: "p", Version: "1.0.0", Schema: schema, FromStep: 1, Count: 2,
			Outputs: []map[string]any{{"u": "earlier"}}}, nil
	})
	env.ExecuteWorkflow(PipelineWorkflow, Input{TaskID: "t", Pipeline: "p", RequestHash: "h", Redrive: &RedriveInput{ID: "key:1"}})
	var res Result
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.calls, ",") != "sync:a,sync:a" || len(calls) != 2 || calls[0].StepIndex != 1 || calls[0].Redrive != 2 {
		t.Fatalf("calls %v %+v", f.calls, calls)
	}
	if got := calls[0].StepOutputs; len(got) != 1 || got[0]["u"] != "earlier" {
		t.Fatalf("step 1 saw outputs %v", got)
	}
	if len(res.Outputs) != 3 || res.Outputs[0]["u"] != "earlier" || f.task.Status != pipeline.StatusSuccess {
		t.Fatalf("result %+v task %+v", res, f.task)
	}
}

// A refused redrive ends the run with the refusal and runs no step.
func TestRedriveRefusedRunsNothing(t *testing.T) {
	f := &fakeActs{}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f.register(env)
	var a *pipelineact.Activities
	env.OnActivity(a.PipelineRedriveTask, mock.Anything, mock.Anything).Return(nil,
		temporal.NewNonRetryableApplicationError("task t is processing", pipeline.ErrTypeRedriveConflict, nil))
	env.ExecuteWorkflow(PipelineWorkflow, Input{TaskID: "t", Pipeline: "p", RequestHash: "h", Redrive: &RedriveInput{ID: "key:1"}})
	var ae *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &ae) || ae.Type() != pipeline.ErrTypeRedriveConflict {
		t.Fatalf("want %s, got %v", pipeline.ErrTypeRedriveConflict, err)
	}
	if len(f.calls) != 0 || f.task.Status != "" {
		t.Fatalf("calls %v task %+v", f.calls, f.task)
	}
}

// The bulk redrive pages with a timer between batches, counts the outcomes, and continues as new
// after bulk.BatchesPerRun batches carrying its cursor and progress.
func TestBulkRedrivePacesAndContinuesAsNew(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env, nil)
	var a *pipelineact.Activities
	var afters []string
	env.OnActivity(a.PipelineRedriveBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, r pipeline.RedriveBatchRequest) (*pipeline.RedriveBatchResult, error) {
		afters = append(afters, r.After)
		id := fmt.Sprintf("t%03d", len(afters))
		outcome := pipeline.OutcomeRedriven
		if len(afters)%2 == 0 {
			outcome = pipeline.OutcomeSkipped
		}
		return &pipeline.RedriveBatchResult{Outcomes: []pipeline.RedriveOutcome{{TaskID: id, Outcome: outcome}}, Last: id,
			Done: len(afters) == 3}, nil
	})
	start := env.Now()
	env.ExecuteWorkflow(PipelineRedriveBulkWorkflow, BulkInput{ID: "b", BatchSize: 1, Interval: time.Second, Progress: BulkProgress{Total: 3}})
	var p BulkProgress
	if err := env.GetWorkflowResult(&p); err != nil {
		t.Fatal(err)
	}
	if !p.Finished || p.Done != 3 || p.Applied != 2 || p.Skipped != 1 || len(p.Outcomes) != 3 || strings.Join(afters, ",") != ",t001,t002" {
		t.Fatalf("progress %+v afters %v", p, afters)
	}
	if waited := env.Now().Sub(start); waited < 2*time.Second {
		t.Fatalf("three batches took %s of workflow time, want a second between batches", waited)
	}

	env = suite.NewTestWorkflowEnvironment()
	Register(env, nil)
	env.OnActivity(a.PipelineRedriveBatch, mock.Anything, mock.Anything).Return(&pipeline.RedriveBatchResult{
		Outcomes: []pipeline.RedriveOutcome{{TaskID: "x", Outcome: pipeline.OutcomeRedriven}}, Last: "x"}, nil)
	env.ExecuteWorkflow(PipelineRedriveBulkWorkflow, BulkInput{ID: "b", BatchSize: 1, Interval: time.Millisecond})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
}
