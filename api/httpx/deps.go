package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/platform"
)

// Deps is what a subsystem's Mount receives: the shared clients and the authentication
// middleware (routes that need a key wrap themselves in it).
type Deps struct {
	Platform *platform.Platform
	// Authn authenticates X-API-Key / Bearer and stores the caller identity.
	Authn echo.MiddlewareFunc
}
