// Package pipeline holds the deterministic workflows of the pipeline subsystem: PipelineWorkflow
// runs one task's vendor steps in order, and ProviderHealthWorkflow refreshes provider_health on
// a schedule. client.go is how the rest of taskloom starts and talks to them.
package pipeline

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/waiting"
)

// Kind is the TaskloomKind search attribute value of pipeline workflows.
const Kind = "pipeline"

// QueryState is the query that returns the workflow's State.
const QueryState = "state"

// ErrTypeStepFailed is the error type a failed pipeline ends with (the Web UI shows it).
const ErrTypeStepFailed = "PipelineStepFailed"

// bookkeepingOptions are for the Mongo bookkeeping, run as local activities (a few quick writes
// need no task-queue round trip): retried until Mongo answers, because a task must never stay
// "processing", nor a unit stay charged, because the database blinked. A refusal (the admission's,
// the redrive's) is final: the table's non-retryable kinds are never retried.
var bookkeepingOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 0,
		NonRetryableErrorTypes: pipeline.NonRetryableRefusalTypes()},
}

// Input starts a PipelineWorkflow: the request, not yet checked. The admission resolves Version
// (empty: the latest) to the schema snapshot the task runs, so publishing a new version never
// changes a running task.
type Input struct {
	TaskID    string
	UserID    string
	FeatureID string
	Pipeline  string
	Version   string
	InputData map[string]any
	// RequestHash fingerprints the request (pipeline.TaskRequest.Hash); the admission update
	// refuses a different request under the same workflow ID.
	RequestHash string
	// Redrive, when set, makes the run a redrive of the failed task (redrive.go): it continues
	// from the first step that did not succeed instead of admitting the task.
	Redrive *RedriveInput `json:",omitempty"`
}

// Result is the workflow's outcome on success.
type Result struct {
	Status  string
	Outputs []map[string]any
}

// State is what the state query returns.
type State struct {
	Status      string
	CurrentStep int
	StepStatus  []string
	ErrorReason string
	// WaitingFor is what the running step waits for (nil once the run has ended).
	WaitingFor *waiting.For
}

// stepFailure is a step that failed; the workflow stops at the first one.
type stepFailure struct {
	index    int
	provider string
	msg      string
}

func (f *stepFailure) Error() string { return f.msg }

// acts names the activities the workflows schedule: a nil receiver's method values only name the
// activity type (its method name, PipelineAdmitTask, …) and type its arguments.
var acts *pipelineact.Activities

type run struct {
	in      Input
	schema  pipeline.Schema // the admitted snapshot
	state   *State
	log     log.Logger
	outputs []map[string]any
	adm     admission
	scf     callbacks
	// redrive is the redrive this run carries out (nil: a first run); the steps before its
	// FromStep succeeded in an earlier run and are skipped.
	redrive *redrive
	cost    costFloor
	// deadline is when max_execution_time runs out (zero: no bound), from when the steps start.
	deadline time.Time
	// job is the running async_api step's submitted vendor job (nil when none).
	job *asyncJob
}

// PipelineWorkflow admits the task (schema, input check, task and step documents, one quota
// unit: all through its own idempotent activity), then runs the steps in order and stops at the
// first failure, refunding the quota once when the schema's on_failure asks for it.
// max_execution_time bounds the run. A caller that needs the admission's answer uses the
// admission update (Update-With-Start, see Client.Start).
func PipelineWorkflow(ctx workflow.Context, in Input) (*Result, error) {
	r, err := setup(ctx, in)
	if err != nil {
		return nil, err
	}
	res, err := r.admitAndRun(ctx)
	// Let an admission update that is waiting answer before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return res, err
}

func setup(ctx workflow.Context, in Input) (*run, error) {
	if in.TaskID == "" || in.Pipeline == "" {
		return nil, temporal.NewNonRetryableApplicationError("pipeline input needs a task id and a pipeline", "InvalidInput", nil)
	}
	r := &run{in: in, state: &State{Status: pipeline.StatusPending, CurrentStep: -1}}
	r.log = log.With(workflow.GetLogger(ctx), "task_id", in.TaskID, "pipeline", in.Pipeline, "version", in.Version)
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) { return *r.state, nil }); err != nil {
		return nil, fmt.Errorf("register state query: %w", err)
	}
	if err := r.registerAdmission(ctx); err != nil {
		return nil, err
	}
	if err := r.registerCallbacks(ctx); err != nil {
		return nil, err
	}
	if err := r.registerRedrive(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *run) admitAndRun(ctx workflow.Context) (*Result, error) {
	var (
		earlier *Result
		err     error
	)
	if r.in.Redrive != nil {
		earlier, err = r.admitRedrive(ctx)
	} else {
		earlier, err = r.admit(ctx)
	}
	if err != nil || earlier != nil {
		return earlier, err
	}
	return r.execute(ctx)
}

func (r *run) execute(ctx workflow.Context) (*Result, error) {
	bctx := workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
	r.startDeadline(ctx)

	runCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	var runErr error
	done := false
	workflow.Go(runCtx, func(gctx workflow.Context) {
		runErr = r.runSteps(gctx)
		done = true
	})
	stopped, cancelled := r.awaitSteps(ctx, func() bool { return done })
	if stopped != nil {
		cancel()
		// The bookkeeping below must run even when the workflow itself was cancelled.
		ctx, _ = workflow.NewDisconnectedContext(ctx)
		bctx = workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
		_ = workflow.Await(ctx, func() bool { return done })
		runErr = stopped
	}

	var sf *stepFailure
	if errors.As(runErr, &sf) {
		_, err := r.end(bctx, ctx, sf)
		if cancelled {
			return nil, temporal.NewCanceledError(reasonCancelled)
		}
		return nil, err
	}
	if runErr != nil {
		return nil, runErr
	}
	return r.end(bctx, ctx, nil)
}

// reasonCancelled is the step error of a pipeline whose workflow an operator cancelled.
const reasonCancelled = "pipeline was cancelled"

// end is where every admitted run ends, sf the step that failed it (nil: success). It records the
// task's end once, through the bookkeeping local activity unless the last sync step's activity
// recorded it already (cost.go), then shows it in the state query and TaskloomStatus and
// returns the workflow's outcome.
func (r *run) end(bctx, ctx workflow.Context, sf *stepFailure) (*Result, error) {
	taskEnd := r.taskEnd(sf)
	if sf != nil {
		r.log.Warn("pipeline failed", "step", sf.index, "reason", taskEnd.ErrorReason)
		r.state.ErrorReason, r.state.StepStatus[sf.index] = taskEnd.ErrorReason, pipeline.StatusFailed
	}
	if !r.cost.endRecorded() {
		if err := workflow.ExecuteLocalActivity(bctx, acts.PipelineFinishTask, *taskEnd).Get(ctx, nil); err != nil {
			return nil, err
		}
	}
	r.state.Status = taskEnd.Status // once recorded: the state query never shows an end the database lacks
	r.showDone(ctx)
	r.upsertStatus(ctx, taskEnd.Status)
	if sf != nil {
		return nil, temporal.NewNonRetryableApplicationError(taskEnd.ErrorReason, ErrTypeStepFailed, nil)
	}
	return &Result{Status: pipeline.StatusSuccess, Outputs: r.outputs}, nil
}

// taskEnd is the task's end as pipeline.EndTask records it, whether the workflow or the last
// sync step's activity runs it: success, or the step that failed the task, with the refund the
// schema's on_failure asks for.
func (r *run) taskEnd(sf *stepFailure) *pipeline.FinishTaskRequest {
	end := &pipeline.FinishTaskRequest{TaskID: r.in.TaskID, UserID: r.in.UserID, FeatureID: r.in.FeatureID, Status: pipeline.StatusSuccess}
	if sf == nil {
		return end
	}
	end.Status, end.Refund = pipeline.StatusFailed, r.schema.RefundsOnFailure()
	end.ErrorReason = fmt.Sprintf("Step %q failed: %s", r.schema.Steps[sf.index].Name, sf.msg)
	end.FailedStep = &pipeline.FinishStepRequest{TaskID: r.in.TaskID, StepIndex: sf.index, Status: pipeline.StatusFailed,
		ProviderRef: sf.provider, ErrorMessage: sf.msg}
	return end
}

func (r *run) upsertStatus(ctx workflow.Context, status string) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(status)); err != nil {
		r.log.Warn("upsert TaskloomStatus failed", "err", err)
	}
}

// runSteps executes the steps in order and returns the first failure. A sync step's activity
// records its own success; async and scf steps finish here.
func (r *run) runSteps(ctx workflow.Context) error {
	bctx := workflow.WithLocalActivityOptions(ctx, bookkeepingOptions)
	for i, st := range r.schema.Steps {
		if i < r.redrive.fromStep() {
			continue // succeeded before the redrive; its output is in r.outputs
		}
		r.state.CurrentStep, r.state.StepStatus[i] = i, pipeline.StatusProcessing
		var (
			provider string
			output   map[string]any
			err      error
		)
		switch st.Type {
		case pipeline.StepSyncAPI:
			provider, output, err = r.runWithFallback(ctx, i, r.callSync)
		case pipeline.StepAsyncAPI:
			provider, output, err = r.runWithFallback(ctx, i, r.callAsync)
		case pipeline.StepSCF:
			output, err = r.runSCF(ctx, i)
		default:
			err = &stepFailure{index: i, msg: fmt.Sprintf("unknown step type %q", st.Type)}
		}
		if err != nil {
			return err
		}
		if st.Type != pipeline.StepSyncAPI {
			if err := workflow.ExecuteLocalActivity(bctx, acts.PipelineFinishStep, pipeline.FinishStepRequest{TaskID: r.in.TaskID,
				StepIndex: i, Status: pipeline.StatusSuccess, ProviderRef: provider, Output: output}).Get(ctx, nil); err != nil {
				return err
			}
		}
		r.state.StepStatus[i] = pipeline.StatusSuccess
		r.outputs = append(r.outputs, output)
	}
	return nil
}

func (r *run) callRequest(i int, provider string) pipeline.CallRequest {
	return pipeline.CallRequest{TaskID: r.in.TaskID, UserID: r.in.UserID, StepIndex: i, Step: r.schema.Steps[i],
		ProviderRef: provider, InputData: r.in.InputData, StepOutputs: r.outputs, Redrive: r.redrive.count()}
}
