// Package taskecho is the HTTP surface of the TaskEcho-compatible task server: TaskEcho's wire
// format (paths, X-API-Key, the {success,data,message,timestamp} envelope, error codes) plus the
// pull, lease and queue-operation routes (docs/taskecho.md). Handlers are thin: decode,
// authorize, call one method of a part of the internal/taskecho server or of its readers
// (internal/taskecho/listing, internal/taskecho/stats), render.
package taskecho

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
	"github.com/taskloom/taskloom/internal/taskecho/pulllimit"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
)

type api struct {
	svc       *taskecho.Server
	lists     *listing.Reader
	reports   *stats.Reader
	limiter   *pulllimit.Limiter
	keys      *auth.Store
	temporal  client.Client
	taskQueue string
	opWait    time.Duration
	log       *slog.Logger
}

// Mount registers every TaskEcho route under /api/v1 behind the API-key middleware.
func Mount(e *echo.Echo, d httpx.Deps) error {
	p, svc := d.Platform, d.Echo
	a := &api{
		svc: svc, lists: listing.New(p.Mongo, svc), reports: stats.New(p.Mongo, svc.Now, p.Log), limiter: taskechowire.Limiter(p), keys: d.KeyStore(),
		temporal: p.Temporal, taskQueue: p.Config.Temporal.TaskQueue, opWait: p.Config.Echo.QueueOpWait,
		log: p.Log.With("subsystem", "echo"),
	}
	a.routes(e.Group("/api/v1", taskEchoAuthText, d.Authn))
	return nil
}

// authFailed is TaskEcho's one message for a missing, unknown or inactive credential; clients
// print error.message, so the TaskEcho routes answer with its text (code INVALID_API_KEY, 401).
const authFailed = "缺少认证信息（Token 或 API Key）"

// taskEchoAuthText gives the platform's 401 TaskEcho's message on the TaskEcho routes.
func taskEchoAuthText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := httpx.FromAuth(next(c))
		var he *httpx.Error
		if errors.As(err, &he) && he.Status == http.StatusUnauthorized {
			return httpx.Unauthorized(authFailed)
		}
		return err
	}
}

var (
	read  = auth.Require(auth.PermRead)
	write = auth.Require(auth.PermWrite)
	admin = auth.Require(auth.PermAdmin)
)

func (a *api) routes(g *echo.Group) {
	// The four calls of the TaskEcho client (push needs write).
	g.POST("/submit", a.submit, write)
	g.POST("/tasks/message", a.appendMessage, write)
	g.POST("/tasks/log", a.appendLog, write)
	g.PATCH("/tasks/status", a.setStatus, write)

	g.GET("/projects", a.listProjects, read)
	g.GET("/projects/check", a.projectsCheck, read)
	g.GET("/projects/tags", a.projectTags, read)
	g.GET("/projects/:projectId", a.getProject, read)
	g.PUT("/projects/:projectId", a.updateProject, admin)
	g.DELETE("/projects/:projectId", a.deleteProject, admin)
	g.GET("/projects/:projectId/metadata", a.getMetadata, read)
	g.PUT("/projects/:projectId/metadata", a.putMetadata, admin)
	g.DELETE("/projects/:projectId/metadata", a.deleteMetadata, admin)

	g.GET("/projects/:projectId/queues", a.listQueues, read)
	g.GET("/projects/:projectId/queues/check", a.queuesCheck, read)
	g.GET("/projects/:projectId/queues/:queueId", a.getQueue, read)
	g.DELETE("/projects/:projectId/queues/:queueId", a.deleteQueue, admin)
	g.POST("/projects/:projectId/queues/:queueId/reset", a.queueOp(queueop.Reset), admin)
	g.POST("/projects/:projectId/queues/:queueId/reset-error", a.queueOp(queueop.ResetError), admin)
	g.POST("/projects/:projectId/queues/:queueId/re-run", a.queueOp(queueop.ReRun), admin)

	g.GET("/projects/:projectId/queues/:queueId/tasks", a.listQueueTasks, read)
	g.POST("/projects/:projectId/queues/:queueId/tasks", a.createQueueTask, admin)
	g.GET("/projects/:projectId/queues/:queueId/tasks/check", a.queueTasksCheck, read)
	g.GET("/projects/:projectId/queues/:queueId/tasks/pull", a.pullQueue, read, a.rateLimit)
	g.GET("/projects/:projectId/queues/:queueId/tasks/:taskId", a.getQueueTask, read)
	g.PUT("/projects/:projectId/queues/:queueId/tasks/:taskId", a.editQueueTask, admin)
	g.DELETE("/projects/:projectId/queues/:queueId/tasks/:taskId", a.deleteQueueTask, admin)
	g.POST("/projects/:projectId/queues/:queueId/tasks/:taskId/re-run", a.reRunTask, admin)

	g.GET("/projects/:projectId/tasks", a.listProjectTasks, read)
	g.POST("/projects/:projectId/tasks", a.createProjectTask, admin)
	g.GET("/projects/:projectId/tasks/pull", a.pullProject, read, a.rateLimit)
	g.POST("/projects/:projectId/tasks/pull/batch", a.pullBatch, read, a.rateLimit)
	g.POST("/projects/:projectId/tasks/pull/confirm/batch", a.confirmBatch, read)
	g.POST("/projects/:projectId/tasks/pull/release/batch", a.releaseBatch, read)
	g.GET("/projects/:projectId/tasks/pull/stats", a.pullStats, read)
	g.GET("/projects/:projectId/tasks/pull/pending", a.pullPending, read)
	g.GET("/projects/:projectId/tasks/:taskId", a.getProjectTask, read)
	g.PUT("/projects/:projectId/tasks/:taskId", a.editProjectTask, admin)
	g.DELETE("/projects/:projectId/tasks/:taskId", a.deleteProjectTask, admin)
	g.POST("/projects/:projectId/tasks/:taskId/move", a.moveTask, admin)
	g.POST("/projects/:projectId/tasks/:taskId/pull/release", a.release, read)
	g.POST("/projects/:projectId/tasks/:taskId/pull/confirm", a.confirm, read)
	g.POST("/projects/:projectId/tasks/:taskId/pull/reset", a.resetPull, admin)
	g.GET("/projects/:projectId/tasks/:taskId/pull/history", a.pullHistory, read)

	g.GET("/stats", a.stats, read)
	g.GET("/stats/system", a.statsSystem, read)
	g.GET("/stats/projects", a.statsProjects, read)
	g.GET("/stats/project/:projectId", a.statsProject, read)
	g.GET("/stats/by-hour", a.statsByHour, read)
	g.GET("/stats/by-queue", a.statsGrouped("queues", "queue_id", func(e taskecho.Execution) string { return e.QueueID }), read)
	g.GET("/stats/by-client", a.statsGrouped("clients", "hostname", func(e taskecho.Execution) string { return e.Hostname }), read)
	g.GET("/stats/error-types", a.statsErrorTypes, read)
	g.GET("/stats/execution-duration", a.statsDuration, read)
	g.GET("/audit", a.audit, admin)

	g.GET("/api-keys", a.listKeys, admin)
	g.POST("/api-keys", a.createKey, admin)
	g.GET("/api-keys/:id", a.getKey, admin)
	g.PUT("/api-keys/:id", a.updateKey, admin)
	g.DELETE("/api-keys/:id", a.deleteKey, admin)
}
