package pipeline

import (
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/schedule"
)

// HealthKind is the TaskloomKind of provider-health runs.
const HealthKind = "pipeline-health"

// healthRunTimeout bounds one scheduled health check.
const healthRunTimeout = 5 * time.Minute

// ScheduleOptions lists the pipeline schedules for `starter schedules apply`: the provider-health
// check every PIPELINE_HEALTH_INTERVAL, overlap SKIP (a slow check is not doubled).
func ScheduleOptions(cfg *config.Config) []client.ScheduleOptions {
	return []client.ScheduleOptions{schedule.Explained(schedule.Every(HealthScheduleID, cfg.Pipeline.HealthInterval, HealthKind,
		cfg.Temporal.TaskQueue, healthRunTimeout, ProviderHealthWorkflow),
		explain.Summary("provider health check", "every "+cfg.Pipeline.HealthInterval.String()),
		explain.Details("Probes every provider and folds in its recent call statistics, writing provider_health "+
			"(up, degraded, down), which the pipelines' provider choice reads.",
			explain.Link{Name: "Console", Path: "/ui/console/pipelines"}, explain.Link{Name: "API", Path: "GET /api/v1/providers"}))}
}
