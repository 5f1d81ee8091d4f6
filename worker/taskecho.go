package worker

import (
	sdkworker "go.temporal.io/sdk/worker"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

// registerEcho registers the task server's workflows and activities over the process's server. The
// PullLeaseSweeper schedule is applied by `starter schedules apply`, like every schedule, not by
// each worker start.
func registerEcho(w sdkworker.Registry, p *platform.Platform, svc *taskecho.Server) {
	taskechowf.Register(w, &taskechoact.Activities{Leases: svc.Leases, QueueOps: svc.QueueOps, Alerter: stats.New(p.Mongo, svc.Now, p.Log),
		Alerts: taskecho.AlertsFromConfig(p.Config.Echo)})
}
