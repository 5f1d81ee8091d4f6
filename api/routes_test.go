package api_test

import (
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

type route struct{ method, path string }

// routes lists the real router's routes, skipping Echo's internal catch-alls.
func routes(env *e2e.Env) []route {
	var out []route
	for _, r := range env.Echo.Routes() {
		if r.Method == "echo_route_not_found" || r.Path == "" {
			continue
		}
		out = append(out, route{r.Method, r.Path})
	}
	return out
}
