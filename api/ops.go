package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/platform"
)

// mountOps adds the routes every deployment has regardless of subsystem: who am I, and the
// effective configuration for operators.
func mountOps(e *echo.Echo, d httpx.Deps) {
	e.GET("/api/v1/me", me, d.Authn)
	// The configuration is the whole deployment's, so a project-bound admin key may not read it.
	e.GET("/internal/config", effectiveConfig(d.Platform), d.Authn, auth.RequireGlobal(auth.PermAdmin))
}

func me(c echo.Context) error {
	id := auth.From(c)
	return c.JSON(http.StatusOK, map[string]any{
		"key_id": id.KeyID, "name": id.Name, "permission": id.Permission, "project_id": id.ProjectID,
	})
}

// effectiveConfig shows what the process runs with, minus anything secret.
func effectiveConfig(p *platform.Platform) echo.HandlerFunc {
	return func(c echo.Context) error {
		cfg := p.Config
		return c.JSON(http.StatusOK, map[string]any{
			"env": cfg.Env,
			"temporal": map[string]any{
				"address": cfg.Temporal.Address, "namespace": cfg.Temporal.Namespace,
				"task_queue": cfg.Temporal.TaskQueue, "tls": cfg.Temporal.TLSCertFile != "" || cfg.Temporal.APIKey != "",
			},
			"mongo_database": cfg.Mongo.Database,
			"kafka_brokers":  cfg.Kafka.Brokers,
			"api_addr":       cfg.API.Addr,
			"body_limit":     cfg.API.BodyLimit,
		})
	}
}
