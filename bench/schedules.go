package main

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// schedules it paused; one already paused is left alone, so that resumeSchedules resumes only
// what this run paused (a cluster's operator may have paused one).
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
		h := c.ScheduleClient().GetHandle(ctx, id)
		d, err := h.Describe(ctx)
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			continue // not configured in this stack
		case err != nil:
			return paused, fmt.Errorf("describe schedule %s: %w", id, err)
		case d.Schedule.State != nil && d.Schedule.State.Paused:
			continue
		}
		if err := h.Pause(ctx, client.SchedulePauseOptions{Note: "paused by make bench: background work is not a unit's cost"}); err != nil {
			return paused, fmt.Errorf("pause schedule %s: %w", id, err)
		}
		paused = append(paused, id)
	}
	return paused, nil
}

// resumeSchedules unpauses what pauseSchedules paused, on a context of its own: it runs when the
// run ends, also when it was interrupted.
func resumeSchedules(c client.Client, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var failed []string
	for _, id := range ids {
		err := c.ScheduleClient().GetHandle(ctx, id).Unpause(ctx, client.ScheduleUnpauseOptions{Note: "resumed by make bench"})
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", id, err))
		}
	}
	if len(failed) > 0 {
		logf("could not resume the schedules %v: unpause them by hand (temporal schedule toggle --unpause)", failed)
		return
	}
	logf("resumed the schedules %v", ids)
}
