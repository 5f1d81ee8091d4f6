package ui_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv"
)

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// Over TLS every UI cookie is Secure (as well as HttpOnly and SameSite).
func TestCookiesAreSecureOverTLS(t *testing.T) {
	_, e := mountUI(t, testenv.Mongo(t))
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	resp, err := client.Get(srv.URL + "/ui/init")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("init page: %d, token found %v", resp.StatusCode, m != nil)
	}
	form := url.Values{"csrf_token": {string(m[1])}, "username": {adminUser}, "password": {adminPass}, "password_confirm": {adminPass}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/init", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	resp2, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusSeeOther {
		t.Fatalf("init post: %d", resp2.StatusCode)
	}
	var session *http.Cookie
	for _, c := range append(resp.Cookies(), resp2.Cookies()...) {
		if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("cookie %s over TLS: Secure=%v HttpOnly=%v SameSite=%v", c.Name, c.Secure, c.HttpOnly, c.SameSite)
		}
		if c.Name == "taskloom_session" {
			session = c
		}
	}
	if session == nil || session.Value == "" {
		t.Fatal("no session cookie after init over TLS")
	}
}
