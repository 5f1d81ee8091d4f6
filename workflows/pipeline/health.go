package pipeline

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// HealthScheduleID is the Temporal schedule that runs ProviderHealthWorkflow.
const HealthScheduleID = "pipeline-provider-health"

// ProviderHealthWorkflow refreshes provider_health once (probes + recent call statistics). The
// schedule runs it every PIPELINE_HEALTH_INTERVAL; overlapping runs are skipped.
func ProviderHealthWorkflow(ctx workflow.Context) (*pipeline.HealthReport, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		// The check heartbeats once per provider (each probe is bounded by a few seconds), so a
		// check lost with its worker is retried after 20 s, not after 2 minutes during which the
		// schedule skips every tick (seen in the scale-out test).
		HeartbeatTimeout: 20 * time.Second,
		RetryPolicy:      &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var rep pipeline.HealthReport
	if err := workflow.ExecuteActivity(ctx, acts.PipelineCheckProviderHealth).Get(ctx, &rep); err != nil {
		return nil, err
	}
	if len(rep.Changed) > 0 {
		workflow.GetLogger(ctx).Info("provider health changed", "changes", rep.Changed)
	}
	return &rep, nil
}
