package echo

import (
	"context"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/platform"
)

// ServiceFor returns the platform's service over its Mongo database, configuration and metrics
// registry, building it and ensuring its indexes once per process: the worker, the JSON API, the
// UI and the dev seeder all ask for it.
func ServiceFor(ctx context.Context, p *platform.Platform) (*Service, error) {
	v, err := p.Shared("echo.service", func() (any, error) {
		svc, err := NewService(p.Mongo, SettingsFromConfig(p.Config.Echo), NewMetrics(p.Metrics), p.Log)
		if err != nil {
			return nil, err
		}
		ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := svc.EnsureIndexes(ictx); err != nil {
			return nil, fmt.Errorf("echo: %w", err)
		}
		return svc, nil
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
