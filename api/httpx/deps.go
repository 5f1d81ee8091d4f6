package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// Deps is what a subsystem's Mount receives: the shared clients, the process's echo service and
// the authentication middleware (routes that need a key wrap themselves in it).
type Deps struct {
	Platform *platform.Platform
	// Echo is the process's one echo service (see echo.FromPlatform); the JSON API and the
	// console share it.
	Echo *taskecho.Server
	// Authn authenticates X-API-Key / Bearer and stores the caller identity.
	Authn echo.MiddlewareFunc
	// Keys is the API-key store Authn verifies against; nil in tests that mount without it.
	Keys *auth.Store
}

// KeyStore is the store for routes that change API keys: Keys, so that the keys Authn remembers
// are forgotten as soon as one changes, or an uncached store when the mount has none.
func (d Deps) KeyStore() *auth.Store {
	if d.Keys != nil {
		return d.Keys
	}
	return auth.NewStore(d.Platform.Mongo)
}
