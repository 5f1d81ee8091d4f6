package echo

import (
	"github.com/taskloom/taskloom/internal/platform"
)

// FromPlatform builds a service over the platform's Mongo database, configuration and metrics
// registry. A process builds one and hands it to everything that serves echo (the worker, the
// JSON API, the UI, the dev seeder): the service holds the process's pull-sharing state, which
// only works when every caller in the process goes through the same instance. Its indexes are
// internal/schema's, created at the process's start.
func FromPlatform(p *platform.Platform) (*Service, error) {
	return NewService(p.Mongo, SettingsFromConfig(p.Config.Echo), NewMetrics(p.Metrics), p.Log)
}

// LimiterFor builds the pull limiter over the platform's Redis.
func LimiterFor(p *platform.Platform, m *Metrics) *Limiter {
	return NewLimiter(p.Redis, p.Config.Redis.KeyPrefix, LimitsFromConfig(p.Config.Echo), m, p.Log)
}
