package arch

import (
	"slices"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/testenv/histories"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// registers are every subsystem's Register, called with nil activities: only the workflow types
// they register matter here.
var registers = map[string]func(worker.Registry){
	"pipeline": func(r worker.Registry) { pipelinewf.Register(r, nil) },
	"entry":    func(r worker.Registry) { entrywf.Register(r, nil) },
	"taskecho": func(r worker.Registry) { taskechowf.Register(r, nil) },
	"webhook":  func(r worker.Registry) { webhookwf.Register(r, nil) },
	"crawl":    func(r worker.Registry) { crawlwf.Register(r, nil) },
}

// TestEveryWorkflowTypeHasAHistory: every registered workflow type has at least one recorded
// history under testdata/histories/<subsystem>/, which its package's replay test replays; a new
// workflow type fails here until a run of it is recorded (RECORD_HISTORIES=1).
func TestEveryWorkflowTypeHasAHistory(t *testing.T) {
	for _, x := range subsystems {
		register, ok := registers[x]
		if !ok {
			t.Errorf("subsystem %s has no Register here", x)
			continue
		}
		files, err := histories.Files(x)
		if err != nil {
			t.Fatal(err)
		}
		var recorded []string
		for _, f := range files {
			typ, err := histories.WorkflowType(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
			}
			recorded = append(recorded, typ)
		}
		types := histories.RegisteredWorkflowTypes(register)
		if len(types) == 0 {
			t.Errorf("%s registers no workflow type", x)
		}
		for _, typ := range types {
			if !slices.Contains(recorded, typ) {
				t.Errorf("workflow type %s (%s) has no recorded history under testdata/histories/%s", typ, x, x)
			}
		}
	}
}
