package worker

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	entryact "github.com/taskloom/taskloom/activities/entry"
	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	webhookact "github.com/taskloom/taskloom/activities/webhook"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// Workflows name an activity by method value, and the SDK resolves a method value by the method's
// own name (the part after the last dot) to the activity type that method was registered under: a
// struct's methods under their names, a method registered with RegisterActivityWithOptions under
// its Name (the names kept for recorded histories, e.g. "pipeline.AdmitTask"). Two subsystems
// registering methods of the same name would make one workflow schedule the other's activity,
// silently. So, over every subsystem's Register, old names included: each method name resolves to
// one activity type, and each activity type is registered once.
func TestActivityNamesAreUniqueAcrossSubsystems(t *testing.T) {
	r := &nameRecorder{t: t, typeOf: map[string]string{}, owner: map[string]string{}}
	crawlwf.Register(r, &crawlact.Activities{})
	entrywf.Register(r, &entryact.Activities{})
	pipelinewf.Register(r, &pipelineact.Activities{})
	taskechowf.Register(r, &taskechoact.Activities{})
	webhookwf.Register(r, &webhookact.Activities{})
	if len(r.owner) < 20 {
		t.Fatalf("recorded %d activity types; the Register functions above register no activities", len(r.owner))
	}
}

// nameRecorder is a worker registry that records activity names and ignores workflows.
type nameRecorder struct {
	sdkworker.Registry // nil: only the methods below are called
	t                  *testing.T
	typeOf             map[string]string // method name → the activity type it resolves to
	owner              map[string]string // activity type → where it was registered
}

func (r *nameRecorder) RegisterWorkflow(any)                                         {}
func (r *nameRecorder) RegisterWorkflowWithOptions(any, workflow.RegisterOptions)    {}
func (r *nameRecorder) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}

func (r *nameRecorder) RegisterActivity(a any) {
	r.RegisterActivityWithOptions(a, activity.RegisterOptions{})
}

func (r *nameRecorder) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	v := reflect.ValueOf(a)
	if v.Kind() == reflect.Func {
		full := runtime.FuncForPC(v.Pointer()).Name()
		method := strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
		name := o.Name
		if name == "" {
			name = method
		}
		r.note(method, name, full)
		return
	}
	typ := v.Type()
	for i := range typ.NumMethod() {
		m := typ.Method(i).Name
		r.note(m, o.Name+m, typ.String())
	}
}

func (r *nameRecorder) note(method, name, where string) {
	if prev, ok := r.typeOf[method]; ok && prev != name {
		r.t.Errorf("method name %s resolves to activity %s and to %s (%s)", method, prev, name, where)
	}
	r.typeOf[method] = name
	if prev, ok := r.owner[name]; ok {
		r.t.Errorf("activity %s is registered by %s and by %s", name, prev, where)
	}
	r.owner[name] = where
}
