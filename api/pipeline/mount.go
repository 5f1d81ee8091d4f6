// Package pipeline is the HTTP API of the pipeline subsystem (docs/pipelines.md): schemas,
// providers, functions, quotas, tasks, and the SCF callback endpoint.
package pipeline

import (
	"errors"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/egress"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// handlers holds what the pipeline routes need.
type handlers struct {
	store *pipelinedb.Store
	// workflows is the one way the handlers reach Temporal.
	workflows *pipelinewf.Client
	verifier  pipeline.Verifier
	// redriveWindow is PIPELINE_REDRIVE_WINDOW.
	redriveWindow time.Duration
	// egress refuses registered URLs the worker must not call (PIPELINE_ALLOWED_HOSTS allows).
	egress *egress.Policy
	log    *slog.Logger
}

// Mount attaches the pipeline routes: /api/v1/... behind API keys, and the SCF callback under
// /api/internal/..., which authenticates by its HMAC signature instead.
func Mount(e *echo.Echo, d httpx.Deps) error {
	cfg := d.Platform.Config
	if !cfg.Dev() && cfg.Pipeline.CallbackSecret == "" {
		return errors.New("INTERNAL_CALLBACK_SECRET: required when TASKLOOM_ENV=prod")
	}
	store := pipelinedb.New(d.Platform.Mongo)
	h := &handlers{
		store:     store,
		workflows: &pipelinewf.Client{Temporal: d.Platform.Temporal, TaskQueue: cfg.Temporal.TaskQueue},
		log:       d.Platform.Log,
		verifier: pipeline.Verifier{Secret: cfg.Pipeline.Secret(), RequireBody: cfg.Pipeline.RequireBodySignature,
			MaxSkew: cfg.Pipeline.CallbackMaxSkew},
		redriveWindow: cfg.Pipeline.RedriveWindow,
		egress:        cfg.Egress(),
	}
	h.routes(e, d.Authn)
	return nil
}

func (h *handlers) routes(e *echo.Echo, authn echo.MiddlewareFunc) {
	// Schemas, providers, health pins, functions and quotas are shared by every project: managing
	// them needs an admin key bound to no project.
	read, write, admin := auth.Require(auth.PermRead), auth.Require(auth.PermWrite), auth.RequireGlobal(auth.PermAdmin)
	v1 := e.Group("/api/v1", authn)
	v1.POST("/pipelines", h.publishPipeline, admin)
	v1.GET("/pipelines", h.listPipelines, read)
	v1.GET("/pipelines/:name", h.listPipelineVersions, read)
	v1.GET("/pipelines/:name/:version", h.getPipeline, read)

	v1.PUT("/providers/:ref", h.putProvider, admin)
	v1.GET("/providers", h.listProviders, read)
	v1.GET("/providers/:ref", h.getProvider, read)
	v1.GET("/providers/:ref/health", h.getHealth, read)
	v1.PUT("/providers/:ref/health", h.putHealth, admin)

	v1.PUT("/functions/:name", h.putFunction, admin)
	v1.GET("/functions", h.listFunctions, read)
	v1.GET("/functions/:name", h.getFunction, read)

	v1.PUT("/quotas/:user_id/:feature_id", h.putQuota, admin)
	v1.GET("/quotas/:user_id/:feature_id", h.getQuota, read)

	v1.POST("/pipeline-tasks", h.createTask, write)
	v1.GET("/pipeline-tasks/:id", h.getTask, read)
	v1.POST("/pipeline-tasks/:id/redrive", h.redriveTask, write)
	bulk := bulkRedriveRoute(h.workflows, h.store.CountRedrivable, h.redriveWindow)
	v1.POST("/pipeline-tasks/redrive", bulk.Start, write)
	v1.GET("/pipeline-tasks/redrive/:bulk_id", bulk.Progress, read)

	e.POST("/api/internal/tasks/:taskId/steps/:stepIndex/callback", h.callback)
}
