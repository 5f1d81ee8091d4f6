package actions

import (
	"path/filepath"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

func ev(t enumspb.EventType, attrs any) *historypb.HistoryEvent {
	e := &historypb.HistoryEvent{EventType: t}
	switch a := attrs.(type) {
	case *historypb.WorkflowExecutionStartedEventAttributes:
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: a}
	case *historypb.WorkflowExecutionSignaledEventAttributes:
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: a}
	case *historypb.MarkerRecordedEventAttributes:
		e.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: a}
	case *historypb.ActivityTaskStartedEventAttributes:
		e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: a}
	case *historypb.UpsertWorkflowSearchAttributesEventAttributes:
		e.Attributes = &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{UpsertWorkflowSearchAttributesEventAttributes: a}
	}
	return e
}

func upsert(names ...string) *historypb.HistoryEvent {
	f := map[string]*commonpb.Payload{}
	for _, n := range names {
		f[n] = &commonpb.Payload{}
	}
	return ev(enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, &historypb.UpsertWorkflowSearchAttributesEventAttributes{
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: f}})
}

func marker(name string, wft int64) *historypb.HistoryEvent {
	return ev(enumspb.EVENT_TYPE_MARKER_RECORDED, &historypb.MarkerRecordedEventAttributes{MarkerName: name, WorkflowTaskCompletedEventId: wft})
}

// One case per rule of https://docs.temporal.io/cloud/actions.
func TestCountRules(t *testing.T) {
	started := ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, &historypb.WorkflowExecutionStartedEventAttributes{})
	child := ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, &historypb.WorkflowExecutionStartedEventAttributes{
		ParentWorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "parent"}})
	signal := ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, &historypb.WorkflowExecutionSignaledEventAttributes{})
	wftScheduled := ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil)
	cases := []struct {
		name    string
		events  []*historypb.HistoryEvent
		actions int
		retries int
	}{
		{"a client start is one", []*historypb.HistoryEvent{started, wftScheduled}, 1, 0},
		{"a child's own start is its parent's", []*historypb.HistoryEvent{child, wftScheduled}, 0, 0},
		{"a child started by the parent is two",
			[]*historypb.HistoryEvent{started, ev(enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, nil)}, 3, 0},
		{"signal-with-start is one in all", []*historypb.HistoryEvent{started, signal, wftScheduled}, 1, 0},
		{"a later signal is one", []*historypb.HistoryEvent{started, wftScheduled, signal}, 2, 0},
		{"a signal from a workflow is its sender's", []*historypb.HistoryEvent{started, wftScheduled,
			ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, &historypb.WorkflowExecutionSignaledEventAttributes{
				ExternalWorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "sender"}})}, 1, 0},
		{"update-with-start is two", []*historypb.HistoryEvent{started, wftScheduled,
			ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, nil)}, 2, 0},
		{"local activities of one workflow task are one",
			[]*historypb.HistoryEvent{started, marker("LocalActivity", 4), marker("LocalActivity", 4), marker("LocalActivity", 9)}, 3, 0},
		{"versions are free, side effects are not",
			[]*historypb.HistoryEvent{started, marker("Version", 4), marker("SideEffect", 4), marker("MutableSideEffect", 4)}, 3, 0},
		{"upserts are one per command; the change-version one is free",
			[]*historypb.HistoryEvent{started, upsert("TemporalChangeVersion"), upsert("A", "B"), upsert("TemporalChangeVersion", "A")}, 3, 0},
		{"timers are one", []*historypb.HistoryEvent{started, ev(enumspb.EVENT_TYPE_TIMER_STARTED, nil)}, 2, 0},
		{"activities are one per attempt", []*historypb.HistoryEvent{started,
			ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, nil),
			ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, &historypb.ActivityTaskStartedEventAttributes{Attempt: 3})}, 4, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Count(tc.events)
			if c.Actions != tc.actions || c.Retries != tc.retries || c.Events != len(tc.events) {
				t.Fatalf("Count = %+v, want %d actions, %d retries, %d events", c, tc.actions, tc.retries, len(tc.events))
			}
		})
	}
}

// A recorded 1-step pipeline, counted by hand from its JSON: start, the admission update, the
// admission's local-activity batch (two markers in one workflow task), the step's activity and
// the final status upsert.
func TestFromFile(t *testing.T) {
	c, err := FromFile(filepath.Join("..", "..", "testdata", "histories", "pipeline", "basic_clean_success.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Actions != 5 || c.Events != 16 {
		t.Fatalf("FromFile = %+v, want 5 actions in 16 events", c)
	}
}
