package pipeline

import (
	"context"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// A new run schedules the Pipeline-prefixed names; a run started before versionPrefixedNames
// (its history has no marker, so GetVersion answers DefaultVersion) schedules the dotted names,
// which Register keeps. The worker's registry turns the method values the workflow executes into
// those names, for activities and local activities alike. The recorded histories of both kinds
// replay in TestReplayRecordedHistories.
func TestActivityNamesByVersion(t *testing.T) {
	cases := []struct {
		name    string
		version workflow.Version
		want    []string
	}{
		{"new run", 1, []string{"PipelineAdmitTask", "PipelineCallSync", "PipelineChooseProviders", "PipelineFinishStep",
			"PipelineFinishTask", "PipelinePollAsync", "PipelineSubmitAsync"}},
		{"run started before the prefixed names", workflow.DefaultVersion, []string{"pipeline.AdmitTask", "pipeline.CallSync",
			"pipeline.ChooseProviders", "pipeline.FinishStep", "pipeline.FinishTask", "pipeline.PollAsync", "pipeline.SubmitAsync"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeActs{usable: []string{"a"},
				submit: func(pipeline.CallRequest) (*pipeline.SubmitResult, error) {
					return &pipeline.SubmitResult{VendorTaskID: "v1", Status: "queued"}, nil
				},
				poll: func(pipeline.PollRequest) (*pipeline.PollResult, error) {
					return &pipeline.PollResult{Status: "success"}, nil
				},
				sync: func(pipeline.CallRequest) (*pipeline.CallResult, error) { return &pipeline.CallResult{}, nil }}
			var mu sync.Mutex
			seen := map[string]bool{}
			saw := func(name string) {
				mu.Lock()
				defer mu.Unlock()
				seen[name] = true
			}
			in := testInput{TaskID: "t", Schema: pipeline.Schema{Steps: []pipeline.Step{asyncStep(), syncStep("s", 1)}}}
			_, err := execute(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
				env.OnGetVersion(versionPrefixedNames, workflow.DefaultVersion, 1).Return(c.version)
				// Before versionCostFloor the task's finish is a local activity of its own.
				env.OnGetVersion(versionCostFloor, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
				env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
					saw(info.ActivityType.Name)
				})
				env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
					saw(info.ActivityType.Name)
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, c.want) {
				t.Fatalf("activity types %q, want %q", got, c.want)
			}
		})
	}
}

// ProviderHealthWorkflow branches the same way.
func TestHealthCheckNameByVersion(t *testing.T) {
	for version, want := range map[workflow.Version]string{1: "PipelineCheckProviderHealth",
		workflow.DefaultVersion: "pipeline.CheckProviderHealth"} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		var a *pipelineact.Activities
		Register(env, a)
		env.OnActivity(want, mock.Anything).Return(&pipeline.HealthReport{Checked: 1}, nil)
		env.OnGetVersion(versionPrefixedNames, workflow.DefaultVersion, 1).Return(version)
		var got string
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			got = info.ActivityType.Name
		})
		env.ExecuteWorkflow(ProviderHealthWorkflow)
		if err := env.GetWorkflowError(); err != nil || got != want {
			t.Fatalf("version %d scheduled %q (%v), want %q", version, got, err, want)
		}
	}
}

// Every legacy name is registered, and runs what its Pipeline-prefixed successor runs: the
// dotted name's method is the prefixed method without its prefix.
func TestLegacyNamesMatchTheirSuccessors(t *testing.T) {
	names := legacyNames(&legacyActivities{})
	if len(names) != 9 {
		t.Fatalf("%d legacy names", len(names))
	}
	acts := reflect.TypeOf(&pipelineact.Activities{})
	for name, fn := range names {
		full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
		method := strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
		if name != "pipeline."+method {
			t.Errorf("%s is registered for method %s", name, method)
		}
		successor, ok := acts.MethodByName("Pipeline" + method)
		if !ok {
			t.Errorf("%s has no successor Pipeline%s", name, method)
			continue
		}
		if got, want := reflect.TypeOf(fn), successor.Type; got.NumIn() != want.NumIn()-1 || got.NumOut() != want.NumOut() {
			t.Errorf("%s: %s does not take what Pipeline%s takes (%s)", name, got, method, want)
		}
	}
}
