package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

func TestLoginAttemptsAreThrottled(t *testing.T) {
	env := e2e.New(t)
	if _, err := uisession.NewUsers(env.Platform.Mongo).Init(context.Background(), adminUser, adminPass); err != nil {
		t.Fatal(err)
	}
	resp, err := noRedirect.Get(env.API.URL + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		t.Fatalf("login page has no CSRF token: %d", resp.StatusCode)
	}
	attempt := func(password string) int {
		form := url.Values{"csrf_token": {string(m[1])}, "username": {adminUser}, "password": {password}}
		req, _ := http.NewRequest(http.MethodPost, env.API.URL+"/ui/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range resp.Cookies() {
			req.AddCookie(c)
		}
		r, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	for i := 0; i < 10; i++ {
		if s := attempt("wrong password"); s != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i+1, s)
		}
	}
	// The limit is spent: even the right password waits.
	if s := attempt(adminPass); s != http.StatusTooManyRequests {
		t.Fatalf("11th attempt: %d, want 429", s)
	}
}
