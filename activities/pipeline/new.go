package pipeline

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/config"

	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

// New builds the activities from the configuration; metrics go to reg.
func New(cfg *config.Config, db *mongo.Database, log *slog.Logger, reg prometheus.Registerer) *Activities {
	return &Activities{
		Store:        pipelinedb.New(db),
		HTTP:         &http.Client{Timeout: cfg.Pipeline.HTTPTimeoutCap},
		Env:          AllowedEnv(cfg.Pipeline.EnvAllowlist),
		BackendURL:   cfg.PipelineBackendURL(),
		HealthWindow: cfg.Pipeline.HealthWindow,
		Log:          log,
		Metrics:      NewMetrics(reg),
	}
}
