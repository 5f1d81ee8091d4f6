// Package schedule applies taskloom's Temporal schedules idempotently: create when missing,
// otherwise replace spec, action and overlap policy, so re-running after a config change is safe.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/searchattr"
)

// Every builds the options of a schedule that starts workflow every interval on taskQueue,
// skipping a run while the previous one is still going. kind becomes TaskloomKind.
func Every(id string, every time.Duration, kind, taskQueue string, runTimeout time.Duration, workflow any, args ...any) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: id, Workflow: workflow, Args: args, TaskQueue: taskQueue, WorkflowRunTimeout: runTimeout,
			TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Kind.ValueSet(kind), searchattr.Key.ValueSet(id)),
		},
		Overlap:       enums.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Minute,
	}
}

// Explained sets the static summary and details of every run s starts, as every execution
// carries them (docs/operations.md "What each execution shows").
func Explained(s client.ScheduleOptions, summary, details string) client.ScheduleOptions {
	if a, ok := s.Action.(*client.ScheduleWorkflowAction); ok {
		a.StaticSummary, a.StaticDetails = summary, details
	}
	return s
}

// Apply creates s, or updates the existing schedule with the same ID to match it.
func Apply(ctx context.Context, c client.Client, s client.ScheduleOptions) error {
	_, err := Upsert(ctx, c, s)
	return err
}

// Upsert is Apply that also reports whether the schedule was created (false: it existed and
// was updated to match s).
func Upsert(ctx context.Context, c client.Client, s client.ScheduleOptions) (created bool, err error) {
	_, err = c.ScheduleClient().Create(ctx, s)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return false, fmt.Errorf("create schedule %s: %w", s.ID, err)
	}
	err = c.ScheduleClient().GetHandle(ctx, s.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sched := in.Description.Schedule
			spec := s.Spec
			sched.Spec, sched.Action = &spec, s.Action
			if sched.Policy == nil {
				sched.Policy = &client.SchedulePolicies{}
			}
			sched.Policy.Overlap = s.Overlap
			return &client.ScheduleUpdate{Schedule: &sched}, nil
		},
	})
	if err != nil {
		return false, fmt.Errorf("update schedule %s: %w", s.ID, err)
	}
	return false, nil
}
