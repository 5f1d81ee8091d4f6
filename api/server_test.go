package api_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestFoundation runs the foundation's checks against one application; none of them changes
// state another one reads.
func TestFoundation(t *testing.T) {
	env := e2e.New(t)
	for name, check := range map[string]func(*testing.T, *e2e.Env){
		"auth errors":           checkAuthErrorsAreJSONWithTheRightStatus,
		"bearer token":          checkBearerTokenIsAccepted,
		"revoked key":           checkRevokedKeyIsRejected,
		"health and metrics":    checkHealthReadinessAndMetrics,
		"error envelopes":       checkUnknownRouteAndBadJSONAreEnvelopes,
		"openapi covers routes": checkEveryRouteIsInTheOpenAPISpec,
	} {
		t.Run(name, func(t *testing.T) { check(t, env) })
	}
}

func checkAuthErrorsAreJSONWithTheRightStatus(t *testing.T, env *e2e.Env) {
	r := env.Do(http.MethodGet, "/internal/config", "", nil)
	assertError(t, r, http.StatusUnauthorized, "INVALID_API_KEY")

	r = env.Do(http.MethodGet, "/internal/config", "sk-not-a-key", nil)
	assertError(t, r, http.StatusUnauthorized, "INVALID_API_KEY")

	read := env.NewKey(auth.PermRead, "")
	r = env.Do(http.MethodGet, "/internal/config", read, nil)
	assertError(t, r, http.StatusForbidden, "FORBIDDEN")

	if r = env.Do(http.MethodGet, "/internal/config", env.AdminKey, nil); r.Status != http.StatusOK {
		t.Fatalf("admin key: %d %s", r.Status, r.Body)
	}
	if r = env.Do(http.MethodGet, "/api/v1/me", read, nil); r.Status != http.StatusOK || r.Map(t)["permission"] != "read" {
		t.Fatalf("me with read key: %d %s", r.Status, r.Body)
	}
}

func checkBearerTokenIsAccepted(t *testing.T, env *e2e.Env) {
	req, _ := http.NewRequest(http.MethodGet, env.API.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+env.AdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bearer: %d", resp.StatusCode)
	}
}

func checkRevokedKeyIsRejected(t *testing.T, env *e2e.Env) {
	store := auth.NewStore(env.Platform.Mongo)
	k, plain, err := store.Create(env.Context(), auth.NewKey{Name: "gone", Permission: auth.PermAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Revoke(env.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	assertError(t, env.Do(http.MethodGet, "/api/v1/me", plain, nil), http.StatusUnauthorized, "INVALID_API_KEY")
}

func checkHealthReadinessAndMetrics(t *testing.T, env *e2e.Env) {
	if r := env.Do(http.MethodGet, "/healthz", "", nil); r.Status != http.StatusOK {
		t.Fatalf("healthz %d", r.Status)
	}
	r := env.Do(http.MethodGet, "/readyz", "", nil)
	var ready struct {
		Status       string
		Dependencies map[string]struct{ Status string }
	}
	r.JSON(t, &ready)
	for _, dep := range []string{"temporal", "mongo", "redis", "kafka"} {
		if ready.Dependencies[dep].Status != "ok" {
			t.Errorf("readyz %s = %q (%s)", dep, ready.Dependencies[dep].Status, r.Body)
		}
	}
	if r.Status != http.StatusOK {
		t.Fatalf("readyz %d %s", r.Status, r.Body)
	}
	r = env.Do(http.MethodGet, "/metrics", "", nil)
	if r.Status != http.StatusOK || !strings.Contains(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, want := range []string{"taskloom_http_requests_total", "go_goroutines"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func checkUnknownRouteAndBadJSONAreEnvelopes(t *testing.T, env *e2e.Env) {
	assertError(t, env.Do(http.MethodGet, "/no/such/route", env.AdminKey, nil), http.StatusNotFound, "RESOURCE_NOT_FOUND")
}

// Every route Echo serves must be described in api/openapi.yaml.
func checkEveryRouteIsInTheOpenAPISpec(t *testing.T, env *e2e.Env) {
	spec := env.Do(http.MethodGet, "/openapi.yaml", "", nil)
	if spec.Status != http.StatusOK {
		t.Fatalf("openapi.yaml: %d", spec.Status)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.Body, &doc); err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	onDisk, err := os.ReadFile("openapi.yaml")
	if err != nil || string(onDisk) != string(spec.Body) {
		t.Fatalf("served spec differs from api/openapi.yaml (%v)", err)
	}
	param := regexp.MustCompile(`:([A-Za-z_]+)`)
	for _, r := range routes(env) {
		path := param.ReplaceAllString(r.path, "{$1}")
		ops, ok := doc.Paths[path]
		if !ok {
			t.Errorf("route %s %s is not in api/openapi.yaml (as %s)", r.method, r.path, path)
			continue
		}
		if _, ok := ops[strings.ToLower(r.method)]; !ok {
			t.Errorf("route %s %s has no %s operation in api/openapi.yaml", r.method, path, strings.ToLower(r.method))
		}
	}
}

func assertError(t *testing.T, r *e2e.Response, status int, code string) {
	t.Helper()
	var body struct {
		Success bool
		Error   struct{ Code, Message string }
	}
	r.JSON(t, &body)
	if r.Status != status || body.Success || body.Error.Code != code || body.Error.Message == "" {
		t.Fatalf("got %d %s; want %d %s", r.Status, r.Body, status, code)
	}
}
