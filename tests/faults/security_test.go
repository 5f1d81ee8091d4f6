package faults_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// probeID fills path parameters in security probes; authorization is decided before any
// handler looks the id up, so its value does not matter.
const probeID = "faultprobe1"

// Fault: a caller without a credential, or with an unknown one, on every route that is not
// public. Must hold: 401 INVALID_API_KEY in the JSON envelope, before the body is read.
func TestEveryProtectedRouteRejectsMissingAndUnknownKeys(t *testing.T) {
	env := e2e.New(t)
	protected := 0
	for _, r := range routeTable(env) {
		if isPublic(r) {
			continue
		}
		protected++
		path := fill(r.path, probeID)
		for _, key := range []string{"", "sk-fault-not-a-key"} {
			resp := send(t, env, request{method: r.method, path: path, key: key, body: []byte(`{}`)})
			if code := expectError(t, fmt.Sprintf("%s key=%q", r, key), resp, http.StatusUnauthorized); code != "" && code != "INVALID_API_KEY" {
				t.Errorf("%s key=%q: code %s, want INVALID_API_KEY", r, key, code)
			}
		}
	}
	if protected < 3 {
		t.Fatalf("only %d protected routes in the table; the route table is not the real router's", protected)
	}
	t.Logf("%d protected routes answered 401 without a key and with an unknown key", protected)
}

// Fault: a read key on routes that change state. Must hold: 403 FORBIDDEN before the body is
// validated (an empty object would otherwise be a 400). The permission each route needs is
// derived by probing with read and write keys and logged, so the table documents itself; the
// only mutating routes a read key may call are TaskEcho's pull operations.
func TestReadKeysCannotWriteAndPermissionsAreConsistent(t *testing.T) {
	env := e2e.New(t)
	read, write := env.NewKey(auth.PermRead, ""), env.NewKey(auth.PermWrite, "")
	var table []string
	for _, r := range routeTable(env) {
		if isPublic(r) {
			continue
		}
		path := fill(r.path, probeID)
		need := auth.PermRead
		readResp := send(t, env, request{method: r.method, path: path, key: read, body: []byte(`{}`)})
		if readResp.Status == http.StatusUnauthorized {
			t.Errorf("%s: a valid read key got 401: %s", r, snippet(readResp.Body))
			continue
		}
		if readResp.Status == http.StatusForbidden {
			need = auth.PermWrite
			expectError(t, r.String()+" read key", readResp, http.StatusForbidden)
			writeResp := send(t, env, request{method: r.method, path: path, key: write, body: []byte(`{}`)})
			if writeResp.Status == http.StatusForbidden {
				need = auth.PermAdmin
				expectError(t, r.String()+" write key", writeResp, http.StatusForbidden)
			}
		}
		table = append(table, fmt.Sprintf("%-6s %-70s %s", r.method, r.path, need))
		if r.mutating() && !pullOperation(r) && need == auth.PermRead {
			t.Errorf("%s changes state but a read key was not refused (status %d): %s", r, readResp.Status, snippet(readResp.Body))
		}
	}
	t.Logf("permission each route needs (probed):\n%s", strings.Join(table, "\n"))
}

// Fault: a key bound to project A used on project B's routes. Must hold: 403 for every route
// with a project in its path, even for an admin key (the binding is the boundary).
func TestProjectBoundKeysCannotTouchOtherProjects(t *testing.T) {
	env := e2e.New(t)
	var scoped []route
	for _, r := range routeTable(env) {
		if !isPublic(r) && projectScoped(r.path) {
			scoped = append(scoped, r)
		}
	}
	if len(scoped) == 0 {
		t.Fatal("no route with a project in its path is mounted: the echo API is missing from the router")
	}
	key := env.NewKey(auth.PermAdmin, "fault-project-a")
	for _, r := range scoped {
		path := fillProject(r.path, "fault-project-b", probeID)
		resp := send(t, env, request{method: r.method, path: path, key: key, body: []byte(`{}`)})
		if code := expectError(t, r.String()+" other project", resp, http.StatusForbidden); code != "" && code != "FORBIDDEN" {
			t.Errorf("%s: code %s, want FORBIDDEN", r, code)
		}
	}
	t.Logf("%d project-scoped routes refused a key bound to another project", len(scoped))
}

// Fault: the web UI without a session. Must hold: pages redirect to the sign-in page and form
// posts do nothing (a redirect or a 4xx, never a 2xx).
func TestUIWithoutSessionRedirectsToLogin(t *testing.T) {
	env := e2e.New(t)
	open := map[string]bool{"/ui": true, "/ui/login": true, "/ui/init": true, "/ui/static/*": true}
	checked := 0
	for _, r := range routeTable(env) {
		if !isUI(r) || open[r.path] {
			continue
		}
		checked++
		resp := send(t, env, request{method: r.method, path: fill(r.path, probeID)})
		if r.method == http.MethodGet {
			// Before the first admin exists the sign-in page is the first-run page.
			if loc := resp.Header.Get("Location"); resp.Status/100 != 3 || (!strings.HasPrefix(loc, "/ui/login") && !strings.HasPrefix(loc, "/ui/init")) {
				t.Errorf("%s without session: %d Location=%q, want a redirect to /ui/login or /ui/init", r, resp.Status, loc)
			}
			continue
		}
		if resp.Status < 300 {
			t.Errorf("%s without session: %d, want a redirect or 4xx", r, resp.Status)
		}
	}
	if checked == 0 {
		t.Fatal("the web UI is not mounted")
	}
}

const callbackSecret = "fault-suite-callback-secret"

// Fault: SCF callbacks that are forged, expired, or replayed with another body. Must hold: 401
// before anything is looked up.
func TestPipelineCallbackRejectsForgedExpiredAndTamperedReplays(t *testing.T) {
	env := e2e.New(t, func(c *config.Config) { c.Pipeline.CallbackSecret = callbackSecret })
	const tmpl = "/api/internal/tasks/:taskId/steps/:stepIndex/callback"
	if !hasRoute(env, http.MethodPost, tmpl) {
		t.Fatal("the pipeline callback route is not mounted")
	}
	task, step := "fault-task-1", "0"
	path := strings.NewReplacer(":taskId", task, ":stepIndex", step).Replace(tmpl)
	body := []byte(`{"status":"success","output":{"url":"https://example.com/a.mp4"}}`)
	now := strconv.FormatInt(time.Now().Unix(), 10)
	old := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	secret := []byte(callbackSecret)
	cases := []struct {
		name   string
		header map[string]string
		body   []byte
	}{
		{"no signature", map[string]string{pipeline.HeaderTimestamp: now}, body},
		{"forged v1", map[string]string{pipeline.HeaderTimestamp: now, pipeline.HeaderSignature: pipeline.SignV1([]byte("guess"), task, step, now)}, body},
		{"forged v2", map[string]string{pipeline.HeaderTimestamp: now, pipeline.HeaderSignature256: pipeline.SignV2([]byte("guess"), task, step, now, body)}, body},
		{"expired", map[string]string{pipeline.HeaderTimestamp: old, pipeline.HeaderSignature256: pipeline.SignV2(secret, task, step, old, body)}, body},
		{"timestamp not a number", map[string]string{pipeline.HeaderTimestamp: "yesterday", pipeline.HeaderSignature: pipeline.SignV1(secret, task, step, "yesterday")}, body},
		{"replayed with another body", map[string]string{pipeline.HeaderTimestamp: now, pipeline.HeaderSignature256: pipeline.SignV2(secret, task, step, now, body)},
			[]byte(`{"status":"failed","error_message":"tampered"}`)},
		{"signed for another task", map[string]string{pipeline.HeaderTimestamp: now, pipeline.HeaderSignature256: pipeline.SignV2(secret, "other", step, now, body)}, body},
	}
	for _, c := range cases {
		resp := send(t, env, request{method: http.MethodPost, path: path, body: c.body, header: c.header})
		expectError(t, "callback "+c.name, resp, http.StatusUnauthorized)
	}
}

// Fault: a Telegram update with a wrong or missing secret token. Must hold: 401.
func TestTelegramWebhookRejectsWrongSecret(t *testing.T) {
	env := e2e.New(t, func(c *config.Config) { c.Entry.TelegramWebhookSecret = "fault-suite-telegram-secret" })
	if !hasRoute(env, http.MethodPost, "/telegram/webhook") {
		t.Fatal("the Telegram webhook is not mounted")
	}
	update := []byte(`{"update_id":1,"message":{"message_id":1,"chat":{"id":1},"text":"/start"}}`)
	for _, secret := range []string{"", "wrong-secret"} {
		h := map[string]string{}
		if secret != "" {
			h["X-Telegram-Bot-Api-Secret-Token"] = secret
		}
		resp := send(t, env, request{method: http.MethodPost, path: "/telegram/webhook", body: update, header: h})
		expectError(t, "telegram secret "+url.QueryEscape(secret), resp, http.StatusUnauthorized)
	}
}

func hasRoute(env *e2e.Env, method, path string) bool {
	for _, r := range routeTable(env) {
		if r.method == method && r.path == path {
			return true
		}
	}
	return false
}
