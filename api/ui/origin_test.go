package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// postWith posts form with the session cookie and extra headers.
func postWith(t *testing.T, env *e2e.Env, path, session string, form url.Values, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.API.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.AddCookie(&http.Cookie{Name: "taskloom_session", Value: session})
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A console post carrying the session's valid CSRF token is still refused when the browser says
// another site sent it; the same post from the console itself goes through.
func TestConsolePostsFromAnotherSiteAreRefused(t *testing.T) {
	env := e2e.New(t)
	usr, err := uisession.NewUsers(env.Platform.Mongo).Init(env.Context(), adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	session, csrf := sessionFor(t, env, usr)
	form := url.Values{"csrf_token": {csrf}, "name": {"planted"}, "permission": {"admin"}}
	before := countKeys(t, env)
	for name, header := range map[string]map[string]string{
		"foreign Origin":                    {"Origin": "https://evil.example"},
		"Origin null":                       {"Origin": "null"},
		"Sec-Fetch-Site cross-site":         {"Sec-Fetch-Site": "cross-site"},
		"Sec-Fetch-Site same-site":          {"Sec-Fetch-Site": "same-site", "Origin": "https://other." + strings.TrimPrefix(env.API.URL, "http://")},
		"foreign Origin, same-origin claim": {"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"},
	} {
		if s := postWith(t, env, "/ui/api-keys", session, form, header); s != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, s)
		}
	}
	if n := countKeys(t, env); n != before {
		t.Fatalf("refused posts created keys: %d → %d", before, n)
	}
	// The sign-in form is held to the same rule.
	if s := postWith(t, env, "/ui/login", "", url.Values{"username": {adminUser}, "password": {adminPass}},
		map[string]string{"Origin": "https://evil.example"}); s != http.StatusForbidden {
		t.Errorf("cross-site sign-in: %d, want 403", s)
	}
	own := map[string]string{"Origin": env.API.URL, "Sec-Fetch-Site": "same-origin"}
	if s := postWith(t, env, "/ui/api-keys", session, form, own); s == http.StatusForbidden || s >= 500 {
		t.Fatalf("the console's own post: %d", s)
	}
	if n := countKeys(t, env); n != before+1 {
		t.Fatalf("the console's own post did not create its key: %d → %d", before, n)
	}
}
