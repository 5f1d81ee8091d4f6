package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestReplayRecordedHistories replays every recorded pipeline history against the current code,
// so a change that breaks determinism for running workflows fails here.
func TestReplayRecordedHistories(t *testing.T) {
	histories.Replay(t, "pipeline", func(r worker.Registry) { Register(r, nil) })
}

// TestReplayDetectsChangedCode proves the replay is not vacuous: a workflow that no longer runs
// the recorded activities must fail against the same history.
func TestReplayDetectsChangedCode(t *testing.T) {
	changed := func(ctx workflow.Context, in Input) (*Result, error) {
		return &Result{Status: "success"}, workflow.Sleep(ctx, time.Second)
	}
	file := filepath.Join(histories.Dir("pipeline"), "basic_clean_success.json")
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: "PipelineWorkflow"})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err == nil {
		t.Fatal("a changed workflow replayed without error")
	}
}

// The recorded histories cover every registered workflow type, and schedule the activities by
// their Pipeline-prefixed names. TestReplayRecordedHistories replays them all.
func TestRecordedHistoriesCoverEveryType(t *testing.T) {
	files, err := histories.Files("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, f := range files {
		typ, err := histories.WorkflowType(f)
		if err != nil {
			t.Fatal(err)
		}
		types[typ] = true
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []struct {
				Scheduled *struct {
					ActivityType struct{ Name string } `json:"activityType"`
				} `json:"activityTaskScheduledEventAttributes"`
			} `json:"events"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatal(err)
		}
		for _, ev := range h.Events {
			if ev.Scheduled != nil && !strings.HasPrefix(ev.Scheduled.ActivityType.Name, "Pipeline") {
				t.Errorf("%s schedules activity %s", filepath.Base(f), ev.Scheduled.ActivityType.Name)
			}
		}
	}
	for _, typ := range histories.RegisteredWorkflowTypes(func(r worker.Registry) { Register(r, nil) }) {
		if !types[typ] {
			t.Errorf("no recorded history of %s", typ)
		}
	}
}
