package pipeline

import (
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays every recorded PipelineWorkflow history (recorded on the dev
// server by `go test ./api/pipeline -run . -record`) against the current code, so a change that
// breaks determinism for running workflows fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("../../testdata/histories/pipeline/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories under testdata/histories/pipeline")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := newReplayer(t)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that no longer runs
// the recorded activities must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in Input) (*Result, error) {
		return &Result{Status: "success"}, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: "PipelineWorkflow"})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "../../testdata/histories/pipeline/basic_clean_success.json"); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}

// newReplayer is a replayer with what Register registers. The SDK's replayer takes no activities,
// so a workflow executing a method value under it would name the method ("AdmitTask") where the
// worker, which registered the method as "pipeline.AdmitTask", names and records the type
// (a local activity's marker must match it exactly). The replayer therefore learns the names from
// Register and applies them as the worker's registry does (TestActivitiesRunUnderTheirTypeNames
// checks that registry's side).
func newReplayer(t *testing.T) worker.WorkflowReplayer {
	t.Helper()
	names := &activityNames{byMethod: map[string]string{}}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		Interceptors: []interceptor.WorkerInterceptor{names}})
	if err != nil {
		t.Fatal(err)
	}
	Register(&replayRegistry{WorkflowReplayer: r, names: names}, nil)
	return r
}

// replayRegistry registers workflows on the replayer and records the activities' type names.
type replayRegistry struct {
	worker.WorkflowReplayer
	// Registry is nil: Register calls none of the methods it would add.
	worker.Registry
	names *activityNames
}

func (r *replayRegistry) RegisterWorkflow(w any) { r.WorkflowReplayer.RegisterWorkflow(w) }

func (r *replayRegistry) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	r.WorkflowReplayer.RegisterWorkflowWithOptions(w, o)
}

func (r *replayRegistry) RegisterDynamicWorkflow(w any, o workflow.DynamicRegisterOptions) {
	r.WorkflowReplayer.RegisterDynamicWorkflow(w, o)
}

func (r *replayRegistry) RegisterActivityWithOptions(fn any, o activity.RegisterOptions) {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name() // …/pipeline.(*Activities).AdmitTask-fm
	method := strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
	r.names.byMethod[method] = o.Name
}

// activityNames renames the activities a replayed workflow executes from method to type name.
type activityNames struct {
	interceptor.WorkerInterceptorBase
	byMethod map[string]string
}

func (n *activityNames) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &renamingInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, names: n}
}

type renamingInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	names *activityNames
}

func (i *renamingInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&renamingOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, names: i.names})
}

type renamingOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	names *activityNames
}

func (o *renamingOutbound) rename(name string) string {
	if typ, ok := o.names.byMethod[name]; ok {
		return typ
	}
	return name
}

func (o *renamingOutbound) ExecuteActivity(ctx workflow.Context, name string, args ...any) workflow.Future {
	return o.Next.ExecuteActivity(ctx, o.rename(name), args...)
}

func (o *renamingOutbound) ExecuteLocalActivity(ctx workflow.Context, name string, args ...any) workflow.Future {
	return o.Next.ExecuteLocalActivity(ctx, o.rename(name), args...)
}
