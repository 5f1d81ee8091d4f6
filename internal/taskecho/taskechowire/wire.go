// Package taskechowire builds the task server from the process's platform: the MongoDB store,
// the Prometheus series and the pull limiter over Redis. The API, the console, the worker and
// the CLI all build theirs here.
package taskechowire

import (
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/pulllimit"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/taskecho/taskechoprom"
)

// FromPlatform builds a server over the platform's Mongo database, configuration and metrics
// registry. A process builds one and hands it to everything that serves TaskEcho (the worker,
// the JSON API, the console, the dev seeder): the server holds the process's pull-sharing state,
// which only works when every caller in the process goes through the same instance. Its indexes
// are internal/schema's, created at the process's start.
func FromPlatform(p *platform.Platform) (*taskecho.Server, error) {
	return taskecho.New(taskechodb.New(p.Mongo), taskecho.SettingsFromConfig(p.Config.Echo), taskechoprom.New(p.Metrics), p.Log)
}

// Limiter builds the pull limiter over the platform's Redis, counting into its metrics registry.
func Limiter(p *platform.Platform) *pulllimit.Limiter {
	m := taskechoprom.New(p.Metrics)
	return pulllimit.New(p.Redis, p.Config.Redis.KeyPrefix, pulllimit.FromConfig(p.Config.Echo), m.Limiter(), p.Log)
}
