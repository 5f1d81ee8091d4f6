package faults_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// route is one entry of the real router's table.
type route struct{ method, path string }

func (r route) String() string { return r.method + " " + r.path }

// mutating reports whether the method changes state.
func (r route) mutating() bool {
	return r.method != http.MethodGet && r.method != http.MethodHead && r.method != http.MethodOptions
}

// routeTable lists the router's routes, skipping Echo's internal catch-alls. It is generated
// from env.Echo.Routes(), so a route added later is covered without editing this suite.
func routeTable(env *e2e.Env) []route {
	var out []route
	for _, r := range env.Echo.Routes() {
		if r.Method == "echo_route_not_found" || r.Path == "" {
			continue
		}
		out = append(out, route{r.Method, r.Path})
	}
	slices.SortFunc(out, func(a, b route) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// publicPaths need no API key: probes, the spec, and the two endpoints that carry their own
// secret (the Telegram webhook's secret token and the pipeline callback's HMAC signature).
var publicPaths = []string{
	"/healthz", "/readyz", "/metrics", "/openapi.yaml", "/docs/api",
	"/telegram/webhook",
	"/api/internal/tasks/:taskId/steps/:stepIndex/callback",
}

// isUI reports whether the route belongs to the web UI, which signs in with a session cookie
// and redirects to its login page instead of answering 401.
func isUI(r route) bool { return r.path == "/ui" || strings.HasPrefix(r.path, "/ui/") }

func isPublic(r route) bool { return slices.Contains(publicPaths, r.path) || isUI(r) }

// pullOperation reports whether the route is a TaskEcho pull operation, which read keys may
// use (internal/auth: "PermRead may read and pull") even when the method is POST.
func pullOperation(r route) bool {
	return strings.Contains(r.path, "/pull/") || strings.HasSuffix(r.path, "/pull")
}

var paramRE = regexp.MustCompile(`:([A-Za-z_]+)|\*`)

// fill replaces every path parameter with value (already escaped for a path).
func fill(path, value string) string {
	return paramRE.ReplaceAllString(path, value)
}

// params lists the route's parameter names.
func params(path string) []string {
	var out []string
	for _, m := range paramRE.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// projectScoped reports whether the route names a project in its path.
func projectScoped(path string) bool {
	for _, p := range params(path) {
		if strings.Contains(strings.ToLower(p), "project") {
			return true
		}
	}
	return strings.Contains(path, "/projects/:")
}

// fillProject puts project into the project parameter and probe into the others.
func fillProject(path, project, probe string) string {
	return paramRE.ReplaceAllStringFunc(path, func(m string) string {
		if strings.Contains(strings.ToLower(m), "project") {
			return url.PathEscape(project)
		}
		return probe
	})
}

// request is a raw HTTP call for the cases e2e.Env.Do cannot express (invalid UTF-8, chunked
// bodies, no Content-Type).
type request struct {
	method, path, key string
	body              []byte
	contentType       string
	chunked           bool // hide the length so the server reads until EOF
	header            map[string]string
}

func send(t testing.TB, env *e2e.Env, r request) *e2e.Response {
	t.Helper()
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
		if r.chunked {
			rd = io.MultiReader(rd) // not a *bytes.Reader: net/http cannot learn the length
		}
	}
	req, err := http.NewRequestWithContext(env.Context(), r.method, env.API.URL+r.path, rd)
	if err != nil {
		t.Fatalf("request %s %s: %v", r.method, r.path, err)
	}
	if r.body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if r.key != "" {
		req.Header.Set("X-API-Key", r.key)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &e2e.Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// envelope is the error body docs/api.md describes.
type envelope struct {
	Success *bool `json:"success"`
	Error   struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Timestamp string `json:"timestamp"`
}

// errorEnvelope checks that resp is an error in the JSON envelope and returns its code, or
// explains what is wrong.
func errorEnvelope(resp *e2e.Response) (string, string) {
	var e envelope
	if err := json.Unmarshal(resp.Body, &e); err != nil {
		return "", "body is not JSON: " + snippet(resp.Body)
	}
	if e.Success == nil || *e.Success || e.Error.Code == "" || e.Error.Message == "" || e.Timestamp == "" {
		return "", "body is not the error envelope: " + snippet(resp.Body)
	}
	return e.Error.Code, ""
}

// expectError fails unless resp has status want (any 4xx when want is 0) and the envelope.
func expectError(t testing.TB, what string, resp *e2e.Response, want int) string {
	t.Helper()
	if (want != 0 && resp.Status != want) || (want == 0 && (resp.Status < 400 || resp.Status > 499)) {
		wantS := "4xx"
		if want != 0 {
			wantS = http.StatusText(want)
		}
		t.Errorf("%s: status %d, want %s: %s", what, resp.Status, wantS, snippet(resp.Body))
		return ""
	}
	code, problem := errorEnvelope(resp)
	if problem != "" {
		t.Errorf("%s: %d %s", what, resp.Status, problem)
	}
	return code
}

func snippet(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
