// Package ui is the TaskEcho web UI under /ui/: server-rendered html/template pages with
// embedded hand-written CSS and JS. Sign-in is a session cookie (package uisession); every page
// action calls the same internal/taskecho service, listing and stats readers and internal/auth store
// the JSON API uses, so the UI has no business rules of its own, only presentation.
package ui

import (
	"net/http"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
	"github.com/taskloom/taskloom/internal/uisession"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// UI holds the page handlers' dependencies.
type UI struct {
	p        *platform.Platform
	users    *uisession.Users
	sessions *uisession.Sessions
	keys     *auth.Store
	svc      *taskecho.Server
	lists    *listing.Reader
	stats    *stats.Reader
	entry    *intake.Tasks
	pipes    *pipelinedb.Store
	logins   *throttle
	pages    pages
}

// Mount attaches the UI routes to e.
func Mount(e *echo.Echo, d httpx.Deps) error {
	u, err := New(d.Platform, d.Echo)
	if err != nil {
		return err
	}
	u.keys = d.KeyStore()
	u.routes(e)
	return nil
}

// New builds the UI over p and the process's echo service, the one the JSON API uses. Its
// collections' indexes are internal/schema's.
func New(p *platform.Platform, svc *taskecho.Server) (*UI, error) {
	users := uisession.NewUsers(p.Mongo)
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	u := &UI{p: p, users: users, sessions: uisession.NewSessions(p.Mongo, uisession.DefaultLifetime),
		keys: auth.NewStore(p.Mongo), svc: svc, lists: listing.New(p.Mongo, svc), stats: stats.New(p.Mongo, svc.Now, p.Log),
		logins: &throttle{}, pages: pg, entry: intake.NewTasks(p, entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue)), pipes: pipelinedb.New(p.Mongo)}
	if p.Redis != nil {
		u.logins = &throttle{rate: redis_rate.NewLimiter(p.Redis), prefix: p.RedisKey("ui:login:")}
	}
	return u, nil
}

func (u *UI) routes(e *echo.Echo) {
	e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/ui/") })
	e.GET("/ui/static/*", staticHandler())

	pub := e.Group("/ui", securityHeaders, u.sameOrigin)
	pub.GET("/login", u.loginPage)
	pub.POST("/login", u.login)
	pub.GET("/init", u.initPage)
	pub.POST("/init", u.initAdmin)

	g := e.Group("/ui", securityHeaders, u.sameOrigin, u.requireSession)
	g.POST("/logout", u.logout)
	g.GET("/", u.home)
	g.GET("/api-keys", u.keysPage)
	g.POST("/api-keys", u.createKey)
	g.POST("/api-keys/:kid/deactivate", u.deactivateKey)
	u.echoRoutes(g)
	u.consoleRoutes(g)
}
