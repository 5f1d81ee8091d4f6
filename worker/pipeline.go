package worker

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/mongo"
	sdkworker "go.temporal.io/sdk/worker"

	pipelineact "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/egress/egresshttp"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/pipeline/vendorhttp"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// registerPipeline registers PipelineWorkflow, ProviderHealthWorkflow and their activities.
func registerPipeline(w sdkworker.Registry, p *platform.Platform) error {
	acts := PipelineActivities(p.Config, p.Mongo, p.Log, p.Metrics)
	acts.Redriver = &pipelinewf.Client{Temporal: p.Temporal, TaskQueue: p.Config.Temporal.TaskQueue}
	pipelinewf.Register(w, acts)
	return nil
}

// PipelineActivities builds the pipeline activities over the pipelines' Mongo store, the vendor
// HTTP client (held to the outbound policy: PIPELINE_ALLOWED_HOSTS, loopback only in dev) and
// the Prometheus series on reg.
func PipelineActivities(cfg *config.Config, db *mongo.Database, log *slog.Logger, reg prometheus.Registerer) *pipelineact.Activities {
	store := pipelinedb.New(db)
	metrics := pipelineprom.New(reg)
	return &pipelineact.Activities{
		Store: store,
		Vendors: &vendorhttp.Client{HTTP: egresshttp.Client(cfg.Egress(), cfg.Pipeline.HTTPTimeoutCap), Calls: store,
			Metrics: metrics, Log: log, RetryAfterMax: cfg.Pipeline.RetryAfterMax},
		Env:          pipelineact.AllowedEnv(cfg.Pipeline.EnvAllowlist),
		BackendURL:   cfg.PipelineBackendURL(),
		HealthWindow: cfg.Pipeline.HealthWindow,
		Breaker: pipeline.BreakerPolicy{Threshold: cfg.Pipeline.BreakerThreshold, Cooldown: cfg.Pipeline.BreakerCooldown,
			CooldownMax: cfg.Pipeline.BreakerCooldownMax, RateLimitWindow: cfg.Pipeline.BreakerRateLimitWindow},
		Log:           log,
		Metrics:       metrics,
		RedriveWindow: cfg.Pipeline.RedriveWindow,
	}
}
