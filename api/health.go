package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/platform"
)

// readyTimeout bounds each dependency check of /readyz.
const readyTimeout = 2 * time.Second

// healthz answers while the process serves HTTP; it checks nothing else on purpose, so an
// orchestrator does not restart the API because a dependency is down.
func healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz reports each dependency with its status and latency; 503 when any is down.
func readyz(p *platform.Platform) echo.HandlerFunc {
	return func(c echo.Context) error {
		results, ok := p.Ready(c.Request().Context(), readyTimeout)
		status, code := "ok", http.StatusOK
		if !ok {
			status, code = "degraded", http.StatusServiceUnavailable
		}
		deps := make(map[string]platform.CheckResult, len(results))
		for _, r := range results {
			deps[r.Name] = r
		}
		return c.JSON(code, map[string]any{"status": status, "dependencies": deps})
	}
}
