package api_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// A project-bound admin key administers its project only. The test walks every route of the
// real router, finds the admin routes (an unbound write key is refused with 403) and sends each
// one the bound admin key: a route on another project's path, and every route that acts on no
// project, must refuse it with 403 FORBIDDEN. A new admin route is covered without being listed.
func TestBoundAdminKeyIsRefusedOnEveryGlobalAdminRoute(t *testing.T) {
	env := e2e.New(t)
	write := env.NewKey(auth.PermWrite, "")
	boundAdmin := env.NewKey(auth.PermAdmin, "A")

	var global []string
	for _, r := range routes(env) {
		path := fill(r.path)
		if env.Do(r.method, path, "", nil).Status != http.StatusUnauthorized {
			continue // not authenticated by API key (public, signed callback, Telegram, console session)
		}
		if env.Do(r.method, path, write, nil).Status != http.StatusForbidden {
			continue // not an admin route
		}
		if handlerScoped(r.path) {
			continue // narrowed to the bound project by its handler (keys, audit: tested in api/taskecho)
		}
		if !strings.Contains(r.path, ":projectId") {
			global = append(global, r.method+" "+r.path)
		}
		res := env.Do(r.method, path, boundAdmin, nil)
		if res.Status != http.StatusForbidden || !strings.Contains(string(res.Body), `"FORBIDDEN"`) {
			t.Errorf("%s %s with an admin key bound to A: %d %s, want 403 FORBIDDEN", r.method, path, res.Status, res.Body)
		}
	}
	for _, want := range []string{"POST /api/v1/pipelines", "PUT /api/v1/providers/:ref", "PUT /api/v1/providers/:ref/health",
		"PUT /api/v1/functions/:name", "PUT /api/v1/quotas/:user_id/:feature_id", "GET /internal/config",
		"GET /internal/tasks/stats", "POST /internal/tasks/:id/resume", "POST /internal/tasks/drop"} {
		if !slices.Contains(global, want) {
			t.Errorf("%s was not found among the global admin routes %v", want, global)
		}
	}
}

var pathParam = regexp.MustCompile(`:[A-Za-z_]+|\*`)

// fill turns a route pattern into a request path; a project in the path is B, which the bound
// key does not own.
func fill(pattern string) string {
	return pathParam.ReplaceAllStringFunc(pattern, func(p string) string {
		if p == ":projectId" {
			return "B"
		}
		return "x1"
	})
}

// handlerScoped reports the admin routes that act on no project in their path and narrow a
// bound key to its project in the handler: API keys and the audit log.
func handlerScoped(pattern string) bool {
	return strings.HasPrefix(pattern, "/api/v1/api-keys") || pattern == "/api/v1/audit"
}
