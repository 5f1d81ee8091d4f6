package ui

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/uisession"
)

// Cookie and form field names.
const (
	sessionCookie = "taskloom_session"
	// loginCSRFCookie carries the double-submit token of the forms shown before sign-in
	// (login, init), which have no session to keep a token in.
	loginCSRFCookie = "taskloom_login_csrf"
	csrfField       = "csrf_token"
	cookiePath      = "/ui"
	sessionCtxKey   = "ui.session"
)

// secure reports whether the browser reached us over TLS (directly or through a proxy that says
// so); cookies are then marked Secure. Trusting the header can only make a cookie stricter.
func secure(c echo.Context) bool {
	return c.Request().TLS != nil || strings.EqualFold(c.Request().Header.Get("X-Forwarded-Proto"), "https")
}

func setCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure(c)})
}

func cookieValue(c echo.Context, name string) string {
	ck, err := c.Cookie(name)
	if err != nil {
		return ""
	}
	return ck.Value
}

func sessionFrom(c echo.Context) *uisession.Session {
	s, _ := c.Get(sessionCtxKey).(*uisession.Session)
	return s
}

// requireSession lets a request through only with a live session cookie; a browser without one
// is sent to sign in (or to the first-run init). Every state-changing request must also carry
// the session's CSRF token in its form.
func (u *UI) requireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		sess, err := u.sessions.Lookup(ctx, cookieValue(c, sessionCookie))
		if errors.Is(err, uisession.ErrNoSession) {
			return u.toSignIn(c)
		}
		if err != nil {
			return u.failPage(c, err)
		}
		if c.Request().Method != http.MethodGet && !sess.CheckCSRF(c.FormValue(csrfField)) {
			return u.forbidden(c, "表单已失效（缺少或错误的 CSRF 令牌），请刷新页面后重试。")
		}
		c.Set(sessionCtxKey, sess)
		// A read-only account views; its only action is signing out.
		if c.Request().Method != http.MethodGet && !sess.Admin() && c.Path() != "/ui/logout" {
			return u.forbidden(c, "只读账号不能执行操作。")
		}
		return next(c)
	}
}

func (u *UI) toSignIn(c echo.Context) error {
	ok, err := u.users.Initialized(c.Request().Context())
	if err != nil {
		return u.failPage(c, err)
	}
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/ui/init")
	}
	target := "/ui/login"
	if c.Request().Method == http.MethodGet {
		target += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// safeNext keeps post-login redirects inside the UI (no open redirect to another site): a
// path under /ui/ that parses as a plain local path, else the home page.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(next, "/ui/") ||
		strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/ui/"
	}
	return next
}

// loginToken returns the pre-sign-in CSRF token, issuing the cookie when the browser has none.
func loginToken(c echo.Context) (string, error) {
	if v := cookieValue(c, loginCSRFCookie); v != "" {
		return v, nil
	}
	tok, err := uisession.RandomToken()
	if err != nil {
		return "", err
	}
	setCookie(c, loginCSRFCookie, tok, 3600)
	return tok, nil
}

// checkLoginToken compares the form token with the cookie (double submit): another site can
// make the browser send the cookie but cannot read it to put it in the form.
func checkLoginToken(c echo.Context) bool {
	ck, form := cookieValue(c, loginCSRFCookie), c.FormValue(csrfField)
	return ck != "" && subtle.ConstantTimeCompare([]byte(ck), []byte(form)) == 1
}

// securityHeaders keeps pages out of frames and caches and limits where scripts and styles may
// come from (only our own embedded files).
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		return next(c)
	}
}
