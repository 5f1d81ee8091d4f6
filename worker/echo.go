package worker

import (
	sdkworker "go.temporal.io/sdk/worker"

	echoact "github.com/taskloom/taskloom/activities/echo"
	"github.com/taskloom/taskloom/internal/echo"
	"github.com/taskloom/taskloom/internal/echo/stats"
	"github.com/taskloom/taskloom/internal/platform"
	echowf "github.com/taskloom/taskloom/workflows/echo"
)

// registerEcho registers the echo workflows and activities over the process's echo service. The
// PullLeaseSweeper schedule is applied by `starter schedules apply`, like every schedule, not by
// each worker start.
func registerEcho(w sdkworker.Registry, p *platform.Platform, svc *echo.Service) {
	echowf.Register(w, &echoact.Activities{Service: svc, Alerter: stats.New(p.Mongo, svc.Now, p.Log),
		Alerts: echo.AlertsFromConfig(p.Config.Echo)})
}
