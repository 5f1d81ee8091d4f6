package auth

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// DeniedError is a request the credential does not allow: Status 401 for a missing, unknown or
// inactive key, 403 for a key that lacks the permission or the project. The API's error handler
// renders it in the error envelope (api/httpx.FromAuth); this package knows nothing of that
// envelope, so it stays below the api layer.
type DeniedError struct {
	Status  int
	Message string
	// ProjectID is the project a project-bound key was refused, when that is the reason.
	ProjectID string
}

func (e *DeniedError) Error() string { return e.Message }

func unauthenticated(msg string) error {
	return &DeniedError{Status: http.StatusUnauthorized, Message: msg}
}

func forbidden(msg, project string) error {
	return &DeniedError{Status: http.StatusForbidden, Message: msg, ProjectID: project}
}

// Identity is who is calling: the key's id, name, level and project binding.
type Identity struct {
	KeyID      string
	Name       string
	Permission Permission
	// ProjectID, when set, is the only project the caller may touch.
	ProjectID string
}

// CanAccessProject reports whether the caller may touch project id.
func (id *Identity) CanAccessProject(project string) bool {
	return id.ProjectID == "" || id.ProjectID == project
}

const identityKey = "taskloom.identity"

// Middleware authenticates X-API-Key or Authorization: Bearer and stores the Identity. Every
// route behind it needs a valid active key.
func Middleware(s *Store) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if From(c) != nil { // already authenticated (e.g. a UI session)
				return next(c)
			}
			plain := credential(c)
			if plain == "" {
				return unauthenticated("missing API key: send X-API-Key or Authorization: Bearer")
			}
			k, err := s.Lookup(c.Request().Context(), plain)
			if errors.Is(err, ErrNotFound) {
				return unauthenticated("API key is unknown or inactive")
			}
			if err != nil {
				return err // a store failure: the error handler maps it (503 when Mongo is down)
			}
			Set(c, &Identity{KeyID: k.ID, Name: k.Name, Permission: k.Permission, ProjectID: k.ProjectID})
			return next(c)
		}
	}
}

func credential(c echo.Context) string {
	if k := strings.TrimSpace(c.Request().Header.Get("X-API-Key")); k != "" {
		return k
	}
	if h := c.Request().Header.Get(echo.HeaderAuthorization); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	return ""
}

// Set stores the caller identity (used by Middleware and by the UI's session login).
func Set(c echo.Context, id *Identity) { c.Set(identityKey, id) }

// From returns the caller identity, or nil on an unauthenticated route.
func From(c echo.Context) *Identity {
	id, _ := c.Get(identityKey).(*Identity)
	return id
}

// Require is route middleware that demands at least permission p.
func Require(p Permission) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := From(c)
			if id == nil {
				return unauthenticated("missing API key: send X-API-Key or Authorization: Bearer")
			}
			if !id.Permission.Includes(p) {
				return forbidden("this API key has "+string(id.Permission)+" permission; the route needs "+string(p), "")
			}
			return next(c)
		}
	}
}

// RequireGlobal is route middleware for resources that belong to no project (pipeline schemas,
// providers and their health pins, functions, quotas, the effective configuration, the entry
// operator routes): it demands permission p from a key bound to no project. A project-bound
// key, admin included, is limited to its project, so it is refused here with a 403 whatever
// its level; the refusal names no resource, so it reveals nothing about what exists.
func RequireGlobal(p Permission) echo.MiddlewareFunc {
	level := Require(p)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return level(func(c echo.Context) error {
			if bound := From(c).ProjectID; bound != "" {
				return forbidden("this API key is bound to project "+bound+"; the route acts on every project and needs a key bound to none", "")
			}
			return next(c)
		})
	}
}

// RequireProject returns a 403 unless the caller may touch project.
func RequireProject(c echo.Context, project string) error {
	id := From(c)
	if id == nil {
		return unauthenticated("missing API key")
	}
	if !id.CanAccessProject(project) {
		return forbidden("this API key is bound to another project", project)
	}
	return nil
}
