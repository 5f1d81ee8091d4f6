package main

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// pauseSchedules pauses the worker's schedules (provider health checks, the lease sweeper, webhook
// sweeps, and whatever else visibility lists, such as webhook creators) for the rest of the run,
// so that what a scenario meters is its units' cost and not background work that happened to fall
// in its window. The webhook scenario starts the sweep it measures itself. The known schedules are
// paused by ID, because a schedule created a moment ago may not be listed yet. It returns the
// schedules it paused.
func pauseSchedules(ctx context.Context, c client.Client) ([]string, error) {
	ids := []string{pipelinewf.HealthScheduleID, taskechowf.SweeperScheduleID, webhookwf.SweepScheduleID}
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	for it.HasNext() {
		s, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		ids = append(ids, s.ID)
	}
	var paused []string
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		err := c.ScheduleClient().GetHandle(ctx, id).Pause(ctx, client.SchedulePauseOptions{
			Note: "paused by make bench: background work is not a unit's cost"})
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			continue // not configured in this stack
		case err != nil:
			return paused, fmt.Errorf("pause schedule %s: %w", id, err)
		}
		paused = append(paused, id)
	}
	return paused, nil
}
