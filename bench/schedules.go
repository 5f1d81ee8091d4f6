package main

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
)

// pauseSchedules pauses every schedule the worker created (provider health checks, the lease
// sweeper, webhook sweeps and creators) for the rest of the run, so that what a scenario meters
// is its units' cost and not background work that happened to fall in its window. The webhook
// scenario starts the sweep it measures itself. It returns the schedules it paused.
func pauseSchedules(ctx context.Context, c client.Client) ([]string, error) {
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var paused []string
	for it.HasNext() {
		s, err := it.Next()
		if err != nil {
			return paused, fmt.Errorf("list schedules: %w", err)
		}
		err = c.ScheduleClient().GetHandle(ctx, s.ID).Pause(ctx, client.SchedulePauseOptions{
			Note: "paused by make bench: background work is not a unit's cost"})
		if err != nil {
			return paused, fmt.Errorf("pause schedule %s: %w", s.ID, err)
		}
		paused = append(paused, s.ID)
	}
	return paused, nil
}
