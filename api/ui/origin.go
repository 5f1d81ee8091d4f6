package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// sameOrigin refuses a state-changing console request that the browser says another site made:
// Sec-Fetch-Site cross-site or same-site, or an Origin that is not this console's. The CSRF token
// and SameSite=Lax cookies already stop such a post; this is the second lock, which holds should
// a token leak. A request with neither header (an old browser, a script) is left to the token.
func (u *UI) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return next(c)
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "cross-site", "same-site":
			return u.forbidden(c, "请求来自其他站点，已拒绝。")
		}
		if o := r.Header.Get("Origin"); o != "" && !u.ownOrigin(o, r.Host) {
			return u.forbidden(c, "请求来源（Origin）不是本控制台，已拒绝。")
		}
		return next(c)
	}
}

// ownOrigin reports whether origin names this console: the host the request was sent to, or
// the host of API_PUBLIC_URL when a proxy in front rewrites Host. Only the host is compared: a
// proxy that terminates TLS makes the scheme the browser used unknowable here. "null" (a
// sandboxed frame, a file) is never ours.
func (u *UI) ownOrigin(origin, host string) bool {
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" {
		return false
	}
	if strings.EqualFold(o.Host, host) {
		return true
	}
	pub, err := url.Parse(u.p.Config.API.PublicURL)
	return err == nil && pub.Host != "" && strings.EqualFold(o.Host, pub.Host)
}
