// Package actions counts what a workflow execution costs on Temporal Cloud: its history events
// and its billable actions, read from the history by Temporal Cloud's published rules
// (https://docs.temporal.io/cloud/actions). The bench reports both per unit of work and the
// budget tests hold them, so a change that adds an activity, a timer or an upsert shows up as a
// number before it shows up on an invoice.
//
// The rules, one history event at a time:
//   - Workflow started: 1 for a client start or a continue-as-new; 0 for a child's own start,
//     which its parent pays (below). A start deduplicated by its workflow ID writes no history
//     and costs nothing.
//   - Signal received: 1, except a signal sent by another workflow (its sender pays, below) and
//     the signal of a Signal-With-Start (the signal is event 2, before the first workflow task:
//     one action covers start and signal together).
//   - Signal sent by the workflow: 1.
//   - Update accepted: 1, on top of the start for an Update-With-Start. Rejected updates leave no
//     event (and are billed anyway: the count is a lower bound when the API rejects updates).
//   - Timer started: 1, implicit timers of AwaitWithTimeout included.
//   - Search attributes upserted: 1 per command, however many attributes it sets; 0 for the
//     TemporalChangeVersion upsert that versioning writes, and attributes given at start are free.
//   - Side effect recorded: 1 (a mutable side effect writes a marker only when its value changes).
//   - Local activities: 1 for all the local activity markers of one workflow task.
//   - Version markers: 0.
//   - Child workflow started: 2 (the start and the child's execution).
//   - Activity: 1 when scheduled, 1 per retry (its started event carries the attempt count). An
//     activity cancelled before it started is counted though it was not billed.
//   - Workflow options updated, Nexus operation scheduled or cancelled: 1.
//
// Not in any history, so not counted: queries (each is an action), activity heartbeats that reach
// the server, schedule starts (2 per scheduled run, plus its workflow start) and extra workflow
// task heartbeats of long local activities.
package actions

import (
	"context"
	"fmt"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// Cost is what one or more workflow executions cost.
type Cost struct {
	Events  int `json:"events"`
	Actions int `json:"actions"`
	// Retries is the part of Actions that activity retries cost: a failure's price, not the
	// design's. Budgets hold Actions - Retries, which a slow machine does not move.
	Retries int `json:"retries"`
}

// Designed is the actions of the path itself, retries aside.
func (c Cost) Designed() int { return c.Actions - c.Retries }

// Add is the cost of both.
func (c Cost) Add(o Cost) Cost {
	return Cost{Events: c.Events + o.Events, Actions: c.Actions + o.Actions, Retries: c.Retries + o.Retries}
}

// Count is the cost of one execution's history.
func Count(events []*historypb.HistoryEvent) Cost {
	c := Cost{Events: len(events)}
	localBatches := map[int64]bool{} // workflow tasks that recorded local activities
	for i, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED &&
			e.GetMarkerRecordedEventAttributes().GetMarkerName() == markerLocalActivity {
			localBatches[e.GetMarkerRecordedEventAttributes().GetWorkflowTaskCompletedEventId()] = true
			continue
		}
		c.Actions += actionsOf(e, i)
		c.Retries += retriesOf(e)
	}
	c.Actions += len(localBatches)
	return c
}

// The SDK's marker names (go.temporal.io/sdk/internal: localActivityMarkerName, sideEffectMarkerName,
// mutableSideEffectMarkerName, versionMarkerName).
const (
	markerLocalActivity     = "LocalActivity"
	markerSideEffect        = "SideEffect"
	markerMutableSideEffect = "MutableSideEffect"
)

// changeVersionAttribute is the search attribute GetVersion upserts; its upserts are free.
const changeVersionAttribute = "TemporalChangeVersion"

// actionsOf is the actions of event e, the i-th of its history, local activity markers aside.
func actionsOf(e *historypb.HistoryEvent, i int) int {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		if e.GetWorkflowExecutionStartedEventAttributes().GetParentWorkflowExecution() != nil {
			return 0
		}
		return 1
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		if e.GetWorkflowExecutionSignaledEventAttributes().GetExternalWorkflowExecution() != nil || i == 1 {
			return 0
		}
		return 1
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
		return retriesOf(e)
	case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
		for name := range e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields() {
			if name != changeVersionAttribute {
				return 1
			}
		}
		return 0
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		switch e.GetMarkerRecordedEventAttributes().GetMarkerName() {
		case markerSideEffect, markerMutableSideEffect:
			return 1
		}
		return 0
	case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
		return 2
	case enumspb.EVENT_TYPE_TIMER_STARTED,
		enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
		enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED,
		enumspb.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED,
		enumspb.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED:
		return 1
	}
	return 0
}

// retriesOf is the attempts after the first that an activity's started event reports: the
// server writes that event once, when the last attempt ends, with the attempt's number.
func retriesOf(e *historypb.HistoryEvent) int {
	if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
		return int(a.GetAttempt()) - 1
	}
	return 0
}

// FromFile is the cost of a history exported as JSON (the Web UI's download, `temporal
// workflow show -o json`, testdata/histories).
func FromFile(path string) (Cost, error) {
	f, err := os.Open(path)
	if err != nil {
		return Cost{}, err
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return Cost{}, fmt.Errorf("read history %s: %w", path, err)
	}
	return Count(h.GetEvents()), nil
}

// Fetch is the cost of one execution (runID "" for the latest run), read from the server's
// history API.
func Fetch(ctx context.Context, c client.Client, workflowID, runID string) (Cost, error) {
	events, err := Events(ctx, c, workflowID, runID)
	if err != nil {
		return Cost{}, err
	}
	return Count(events), nil
}

// Events reads one execution's history (runID "" for the latest run) from the server's history
// API, for a caller that needs the events themselves as well as their cost.
func Events(ctx context.Context, c client.Client, workflowID, runID string) ([]*historypb.HistoryEvent, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		events = append(events, e)
	}
	return events, nil
}
