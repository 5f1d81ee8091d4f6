// Package histories records workflow histories from the integration tests and replays them in the
// workflow packages' tests, one way for every subsystem.
//
// Recording: run the integration tests with RECORD_HISTORIES=1 (e.g.
// `RECORD_HISTORIES=1 go test ./api/pipeline -run TestX`); each Record call then writes
// testdata/histories/<subsystem>/<name>.json in the JSON `temporal workflow show --output json`
// prints. Replaying: each workflow package's replay test calls Replay with its Register function.
package histories

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/taskloom/taskloom/internal/actions"
)

// RecordEnv is the one switch that makes Record write files.
const RecordEnv = "RECORD_HISTORIES"

// Dir is testdata/histories/<subsystem> in this repository.
func Dir(subsystem string) string {
	_, file, _, _ := runtime.Caller(0) // <root>/internal/testenv/histories/histories.go
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	return filepath.Join(root, "testdata", "histories", subsystem)
}

// Record checks a finished workflow's cost against the budget of the path it ran (budgets.go)
// and, when RecordEnv is set, writes its history to Dir(subsystem)/<name>.json. runID "" is the
// latest run.
func Record(t testing.TB, c client.Client, subsystem, workflowID, runID, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("record history of %s: %v", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	if msg := checkBudget(subsystem, name, actions.Count(h.Events)); msg != "" {
		t.Error(msg)
	}
	if os.Getenv(RecordEnv) == "" {
		return
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatalf("record history of %s: %v", workflowID, err)
	}
	if err := os.MkdirAll(Dir(subsystem), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(Dir(subsystem), name+".json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Files lists the recorded histories of subsystem.
func Files(subsystem string) ([]string, error) {
	return filepath.Glob(filepath.Join(Dir(subsystem), "*.json"))
}

// Replay replays every history recorded for subsystem against the workflows register puts on a
// replayer (register is the package's Register, called with nil activities), each as a subtest;
// a non-deterministic change fails here. It fails when nothing is recorded.
func Replay(t *testing.T, subsystem string, register func(worker.Registry)) {
	t.Helper()
	ReplayWith(t, subsystem, register, nil)
}

// ReplayWith is Replay on a replayer whose data converter is dc (nil: the SDK's default), as a
// worker with payload encryption on (internal/codec) replays.
func ReplayWith(t *testing.T, subsystem string, register func(worker.Registry), dc converter.DataConverter) {
	t.Helper()
	files, err := Files(subsystem)
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories under %s (record with %s=1): %v", Dir(subsystem), RecordEnv, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := NewReplayerWith(t, register, dc).ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", filepath.Base(f), err)
			}
		})
	}
}

// WorkflowType is the type name a recorded history started.
func WorkflowType(file string) (string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var h struct {
		Events []struct {
			Attrs *struct {
				WorkflowType struct{ Name string } `json:"workflowType"`
			} `json:"workflowExecutionStartedEventAttributes"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.Events) == 0 || h.Events[0].Attrs == nil {
		return "", &os.PathError{Op: "read workflow type", Path: file, Err: os.ErrInvalid}
	}
	return h.Events[0].Attrs.WorkflowType.Name, nil
}

// NewReplayer is a replayer holding what register registers. The SDK's replayer takes no
// activities, so a workflow executing a method value under it names the method where a worker
// names the activity type the method was registered under (RegisterActivityWithOptions); a local
// activity's marker must match that name exactly. The replayer therefore learns those names from
// register and renames the calls as a worker's registry does.
func NewReplayer(t testing.TB, register func(worker.Registry)) worker.WorkflowReplayer {
	t.Helper()
	return NewReplayerWith(t, register, nil)
}

// NewReplayerWith is NewReplayer with the data converter dc (nil: the SDK's default).
func NewReplayerWith(t testing.TB, register func(worker.Registry), dc converter.DataConverter) worker.WorkflowReplayer {
	t.Helper()
	names := &activityNames{byMethod: map[string]string{}}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		Interceptors: []interceptor.WorkerInterceptor{names}, DataConverter: dc})
	if err != nil {
		t.Fatal(err)
	}
	register(&Registry{WorkflowReplayer: r, names: names})
	return r
}

// Registry is the worker.Registry a Register function sees under NewReplayer (and under
// RegisteredWorkflowTypes): workflows go to the replayer, activities only leave their names.
type Registry struct {
	worker.WorkflowReplayer
	// NexusServiceRegistry is nil: no subsystem registers a Nexus service.
	worker.NexusServiceRegistry
	names *activityNames
	types *[]string
}

// RegisteredWorkflowTypes is every workflow type name register registers.
func RegisteredWorkflowTypes(register func(worker.Registry)) []string {
	var types []string
	register(&Registry{WorkflowReplayer: worker.NewWorkflowReplayer(), names: &activityNames{byMethod: map[string]string{}}, types: &types})
	return types
}

func (r *Registry) RegisterWorkflow(w any) {
	r.note(funcName(w))
	r.WorkflowReplayer.RegisterWorkflow(w)
}

func (r *Registry) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	name := o.Name
	if name == "" {
		name = funcName(w)
	}
	r.note(name)
	r.WorkflowReplayer.RegisterWorkflowWithOptions(w, o)
}

func (r *Registry) note(name string) {
	if r.types != nil {
		*r.types = append(*r.types, name)
	}
}

func (r *Registry) RegisterDynamicWorkflow(w any, o workflow.DynamicRegisterOptions) {
	r.WorkflowReplayer.RegisterDynamicWorkflow(w, o)
}

// RegisterActivity: a struct's activities are named after their methods, as the replayer names them.
func (r *Registry) RegisterActivity(any) {}

// RegisterActivityWithOptions remembers the type name a function is registered under.
func (r *Registry) RegisterActivityWithOptions(fn any, o activity.RegisterOptions) {
	if reflect.TypeOf(fn).Kind() == reflect.Func && o.Name != "" {
		r.names.byMethod[funcName(fn)] = o.Name
	}
}

func (r *Registry) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}

// funcName is the SDK's name for a function or method value: the part after the last dot,
// without the -fm suffix of a method value.
func funcName(fn any) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
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
