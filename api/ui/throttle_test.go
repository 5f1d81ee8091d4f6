package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/crypto/bcrypt"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// Ten wrong passwords spend the username's burst; the limit then lets one attempt a minute
// through, so the eleventh is refused only when the ten took less than a minute. Each attempt
// checks the password with the stored hash's bcrypt cost, which under -race on a loaded
// machine takes seconds at the production cost: the account is stored with the minimum cost,
// which keeps the ten well inside the minute: the test is about the throttle, not bcrypt.
func TestLoginAttemptsAreThrottled(t *testing.T) {
	env := e2e.New(t)
	ctx := context.Background()
	if _, err := uisession.NewUsers(env.Platform.Mongo).Init(ctx, adminUser, adminPass); err != nil {
		t.Fatal(err)
	}
	cheap, err := bcrypt.GenerateFromPassword([]byte(adminPass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := env.Platform.Mongo.Collection("ui_users").UpdateOne(ctx, bson.M{"username": adminUser},
		bson.M{"$set": bson.M{"password_hash": cheap}}); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("store a minimum-cost hash: %+v, %v", r, err)
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

// A new X-Forwarded-For on every attempt does not make a new client: the API trusts the header
// only from TRUSTED_PROXIES (none here), so every attempt counts against the one connection's
// address, and the per-address limit (30 in 30 minutes) refuses the rest. The attempts are
// spread over four accounts, nine at most each, so the per-account limit (10) plays no part;
// their hashes have the minimum bcrypt cost so that the 34 attempts take seconds even under
// -race, well inside the minute after which the address limit lets one more through.
func TestForwardedForDoesNotEscapeTheSignInThrottle(t *testing.T) {
	env := e2e.New(t)
	ctx := context.Background()
	users := uisession.NewUsers(env.Platform.Mongo)
	names := []string{adminUser, "reader1", "reader2", "reader3"}
	if _, err := users.Init(ctx, adminUser, adminPass); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[1:] {
		if _, err := users.AddReader(ctx, n, adminPass); err != nil {
			t.Fatal(err)
		}
	}
	cheap, err := bcrypt.GenerateFromPassword([]byte(adminPass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Platform.Mongo.Collection("ui_users").UpdateMany(ctx, bson.M{}, bson.M{"$set": bson.M{"password_hash": cheap}}); err != nil {
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
	var statuses []int
	for i := range 34 {
		form := url.Values{"csrf_token": {string(m[1])}, "username": {names[i%len(names)]}, "password": {"wrong password"}}
		req, _ := http.NewRequest(http.MethodPost, env.API.URL+"/ui/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
		for _, c := range resp.Cookies() {
			req.AddCookie(c)
		}
		r, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		statuses = append(statuses, r.StatusCode)
	}
	for i, s := range statuses {
		want := http.StatusUnauthorized
		if i >= 30 {
			want = http.StatusTooManyRequests
		}
		if s != want {
			t.Fatalf("attempt %d: %d, want %d (all: %v)", i+1, s, want, statuses)
		}
	}
}
