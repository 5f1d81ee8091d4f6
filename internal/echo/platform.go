package echo

import (
	"github.com/taskloom/taskloom/internal/platform"
)

// ServiceFor returns the platform's service over its Mongo database, configuration and metrics
// registry, built once per process: the worker, the JSON API, the UI and the dev seeder all ask
// for it. Its indexes are internal/schema's, created at the process's start.
func ServiceFor(p *platform.Platform) (*Service, error) {
	v, err := p.Shared("echo.service", func() (any, error) {
		return NewService(p.Mongo, SettingsFromConfig(p.Config.Echo), NewMetrics(p.Metrics), p.Log)
	})
	if err != nil {
		return nil, err
	}
	return v.(*Service), nil
}

// LimiterFor builds the pull limiter over the platform's Redis.
func LimiterFor(p *platform.Platform, m *Metrics) *Limiter {
	return NewLimiter(p.Redis, p.Config.Redis.KeyPrefix, LimitsFromConfig(p.Config.Echo), m, p.Log)
}
