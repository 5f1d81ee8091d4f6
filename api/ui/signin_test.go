package ui_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

const (
	adminUser = "admin"
	adminPass = "correct horse battery"
)

// noRedirect is an HTTP client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postForm posts a form with the given session cookie (none when empty).
func postForm(t *testing.T, base, path, session string, form url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "taskloom_session", Value: session})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	resp.Body.Close()
	return resp
}

func getPage(t *testing.T, base, path, session string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "taskloom_session", Value: session})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	// Read the body before releasing the connection, so callers can still inspect it.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

func countKeys(t *testing.T, env *e2e.Env) int64 {
	t.Helper()
	_, n, err := auth.NewStore(env.Platform.Mongo).List(env.Context(), auth.ListFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInitLoginLogout(t *testing.T) {
	env := e2e.New(t)
	if r := getPage(t, env.API.URL, "/ui/projects/x", ""); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/ui/init" {
		t.Fatalf("unauthenticated visit before init: %d → %q, want 303 → /ui/init", r.StatusCode, r.Header.Get("Location"))
	}
	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)
	session := b.sessionCookie()
	if session == "" {
		t.Fatal("no session cookie after init")
	}
	csrf := get(b, "read CSRF token", chromedp.Value(chromedp.CSS(`form.logout input[name=csrf_token]`)))

	b.submit("#logout", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已退出登录") {
		t.Fatalf("after logout flash = %q", got)
	}
	// The old cookie is dead server-side: it can neither read nor act.
	if r := getPage(t, env.API.URL, "/ui/", session); r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/ui/login") {
		t.Fatalf("GET with logged-out cookie: %d → %q", r.StatusCode, r.Header.Get("Location"))
	}
	before := countKeys(t, env)
	r := postForm(t, env.API.URL, "/ui/api-keys", session, url.Values{"csrf_token": {csrf}, "name": {"evil"}, "permission": {"admin"}})
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/ui/login") || countKeys(t, env) != before {
		t.Fatalf("POST with logged-out cookie: %d → %q (keys %d → %d)", r.StatusCode, r.Header.Get("Location"), before, countKeys(t, env))
	}

	// A protected page sends the browser to sign in and back.
	b.open("/ui/api-keys")
	if p := b.path(); !strings.HasPrefix(p, "/ui/login?next=") {
		t.Fatalf("visit after logout went to %s", p)
	}
	b.fill(map[string]string{"#username": adminUser, "#password": "wrong password"})
	b.submit("#submit", "#form-error")
	if got := b.text("#form-error"); !strings.Contains(got, "用户名或密码错误") {
		t.Fatalf("wrong password message = %q", got)
	}
	b.fill(map[string]string{"#password": adminPass})
	b.submit("#submit", "#keys")
	if p := b.path(); p != "/ui/api-keys" {
		t.Fatalf("after login landed on %s, want /ui/api-keys", p)
	}
	if b.sessionCookie() == session {
		t.Fatal("login reused the old session id")
	}
	if r := getPage(t, env.API.URL, "/ui/init", ""); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/ui/login" {
		t.Fatalf("init after init: %d → %q", r.StatusCode, r.Header.Get("Location"))
	}
}

func TestFormsWithoutCSRFTokenAreRejected(t *testing.T) {
	env := e2e.New(t)
	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)
	b.open("/ui/api-keys")
	before := countKeys(t, env)

	// A real form whose token was stripped, submitted by the browser.
	b.fill(map[string]string{"#key-name": "no-token"})
	get(b, "strip the CSRF token", chromedp.Evaluate[bool](
		`document.querySelector('form[action="/ui/api-keys"] input[name=csrf_token]').remove() === undefined`))
	b.submit("#key-create", "#error-text")
	if got := b.text("#error-text"); !strings.Contains(got, "CSRF") {
		t.Fatalf("tokenless post page says %q", got)
	}
	// A forged post with the right cookie but a wrong token, and a login post without one.
	session := b.sessionCookie()
	if r := postForm(t, env.API.URL, "/ui/api-keys", session, url.Values{"csrf_token": {"forged"}, "name": {"x"}, "permission": {"read"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("forged token: %d", r.StatusCode)
	}
	if r := postForm(t, env.API.URL, "/ui/login", "", url.Values{"username": {adminUser}, "password": {adminPass}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("login without token: %d", r.StatusCode)
	}
	if n := countKeys(t, env); n != before {
		t.Fatalf("rejected posts created keys: %d → %d", before, n)
	}
}

func TestAPIKeysCreateShowOnceAndDeactivate(t *testing.T) {
	env := e2e.New(t)
	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)
	b.open("/ui/api-keys")
	b.fill(map[string]string{"#key-name": "ci-reader", "#key-perm": "read"})
	b.submit("#key-create", "#new-key")
	b.snap("api-keys-created")
	plain := b.text("#new-key")
	if !strings.HasPrefix(plain, "sk-") {
		t.Fatalf("created key shown as %q", plain)
	}
	if r := env.Do(http.MethodGet, "/api/v1/me", plain, nil); r.Status != http.StatusOK || r.Map(t)["permission"] != "read" {
		t.Fatalf("new key on the JSON API: %d %s", r.Status, r.Body)
	}
	b.open("/ui/api-keys")
	html := get(b, "read keys page", chromedp.OuterHTML(chromedp.CSS("body")))
	if strings.Contains(html, plain) {
		t.Fatal("the key's plaintext is shown again after the creation page")
	}
	// Binding to a project that does not exist is refused in plain words.
	b.fill(map[string]string{"#key-name": "bound", "#key-project": "no-such-project"})
	b.submit("#key-create", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "项目不存在") {
		t.Fatalf("unknown project binding says %q", got)
	}
	b.submit(`tr:first-child form[action$="/deactivate"] button`, "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已停用") {
		t.Fatalf("deactivate says %q", got)
	}
	if r := env.Do(http.MethodGet, "/api/v1/me", plain, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("deactivated key still works: %d", r.Status)
	}
}
