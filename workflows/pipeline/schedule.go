package pipeline

import (
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/schedule"
)

// HealthKind is the TaskloomKind of provider-health runs.
const HealthKind = "pipeline-health"

// healthRunTimeout bounds one scheduled health check.
const healthRunTimeout = 5 * time.Minute

// ScheduleOptions lists the pipeline schedules for `starter schedules apply`: the provider-health
// check every PIPELINE_HEALTH_INTERVAL, overlap SKIP (a slow check is not doubled).
func ScheduleOptions(cfg *config.Config) []client.ScheduleOptions {
	return []client.ScheduleOptions{schedule.Every(HealthScheduleID, cfg.Pipeline.HealthInterval, HealthKind,
		cfg.Temporal.TaskQueue, healthRunTimeout, ProviderHealthWorkflow)}
}
