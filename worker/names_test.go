package worker

import (
	"reflect"
	"testing"

	crawlacts "github.com/taskloom/taskloom/activities/crawl"
	entryacts "github.com/taskloom/taskloom/activities/entry"
	pipelineacts "github.com/taskloom/taskloom/activities/pipeline"
	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	webhookacts "github.com/taskloom/taskloom/activities/webhook"
)

// Workflows name an activity by method value, and the SDK takes the method's own name from it.
// The pipeline activities are registered under dotted names through aliases keyed by that method
// name, so two subsystems' structs with a method of the same name would make one workflow
// schedule the other's activity, silently. Every exported method of every activity struct must
// therefore be unique across subsystems.
func TestActivityMethodNamesAreUniqueAcrossSubsystems(t *testing.T) {
	owner := map[string]string{}
	for _, s := range []any{&crawlacts.Activities{}, &taskechoact.Activities{}, &entryacts.Activities{},
		&pipelineacts.Activities{}, &webhookacts.Activities{}} {
		typ := reflect.TypeOf(s)
		for i := range typ.NumMethod() {
			name, pkg := typ.Method(i).Name, typ.Elem().PkgPath()
			if prev, ok := owner[name]; ok {
				t.Errorf("activity method %s is on both %s and %s", name, prev, pkg)
			}
			owner[name] = pkg
		}
	}
	if len(owner) < 20 {
		t.Fatalf("found %d activity methods; the structs above are not the activity structs", len(owner))
	}
}
