package taskecho

import (
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho/pulllimit"
)

// FromPlatform builds a service over the platform's Mongo database, configuration and metrics
// registry. A process builds one and hands it to everything that serves echo (the worker, the
// JSON API, the UI, the dev seeder): the service holds the process's pull-sharing state, which
// only works when every caller in the process goes through the same instance. Its indexes are
// internal/schema's, created at the process's start.
func FromPlatform(p *platform.Platform) (*Service, error) {
	return NewService(p.Mongo, SettingsFromConfig(p.Config.Echo), NewMetrics(p.Metrics), p.Log)
}

// LimiterFor builds the pull limiter over the platform's Redis, counting into m's collectors.
func LimiterFor(p *platform.Platform, m *Metrics) *pulllimit.Limiter {
	return pulllimit.New(p.Redis, p.Config.Redis.KeyPrefix, pulllimit.FromConfig(p.Config.Echo),
		pulllimit.Metrics{Refused: m.RateLimited, Failures: m.RateLimitErrors}, p.Log)
}
