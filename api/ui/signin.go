package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/uisession"
)

type signinForm struct {
	Token    string
	Next     string
	Username string
	Error    string
}

func (u *UI) loginPage(c echo.Context) error {
	ok, err := u.users.Initialized(c.Request().Context())
	if err != nil {
		return u.failPage(c, err)
	}
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/ui/init")
	}
	return u.signinForm(c, http.StatusOK, "login.html", "登录", signinForm{Next: c.QueryParam("next")})
}

func (u *UI) signinForm(c echo.Context, status int, page, title string, f signinForm) error {
	tok, err := loginToken(c)
	if err != nil {
		return u.failPage(c, err)
	}
	f.Token = tok
	return u.render(c, status, page, title, "", f)
}

// login checks the credentials and starts a new session. A fresh session token on every
// sign-in means a cookie planted before sign-in (session fixation) is never promoted.
func (u *UI) login(c echo.Context) error {
	if !checkLoginToken(c) {
		return u.forbidden(c, "登录表单已失效（缺少或错误的 CSRF 令牌），请刷新页面后重试。")
	}
	ctx := c.Request().Context()
	f := signinForm{Next: c.FormValue("next"), Username: c.FormValue("username")}
	if wait, ok := u.logins.allow(c, f.Username); !ok {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		f.Error = fmt.Sprintf("登录尝试过于频繁，请 %d 秒后再试", int(wait.Seconds())+1)
		return u.signinForm(c, http.StatusTooManyRequests, "login.html", "登录", f)
	}
	usr, err := u.users.Authenticate(ctx, f.Username, c.FormValue("password"))
	if errors.Is(err, uisession.ErrBadCredentials) {
		f.Error = plainError(err)
		return u.signinForm(c, http.StatusUnauthorized, "login.html", "登录", f)
	}
	if err != nil {
		return u.failPage(c, err)
	}
	return u.startSession(c, usr, safeNext(f.Next))
}

func (u *UI) startSession(c echo.Context, usr uisession.User, target string) error {
	_, token, err := u.sessions.Create(c.Request().Context(), usr)
	if err != nil {
		return u.failPage(c, err)
	}
	setCookie(c, sessionCookie, token, int(u.sessions.Lifetime().Seconds()))
	setCookie(c, loginCSRFCookie, "", -1)
	return c.Redirect(http.StatusSeeOther, target)
}

func (u *UI) initPage(c echo.Context) error {
	ok, err := u.users.Initialized(c.Request().Context())
	if err != nil {
		return u.failPage(c, err)
	}
	if ok {
		return c.Redirect(http.StatusSeeOther, "/ui/login")
	}
	return u.signinForm(c, http.StatusOK, "init.html", "初始化管理员", signinForm{})
}

// initAdmin creates the first administrator (only while none exists) and signs them in.
func (u *UI) initAdmin(c echo.Context) error {
	if !checkLoginToken(c) {
		return u.forbidden(c, "初始化表单已失效（缺少或错误的 CSRF 令牌），请刷新页面后重试。")
	}
	f := signinForm{Username: c.FormValue("username")}
	pass := c.FormValue("password")
	if pass != c.FormValue("password_confirm") {
		f.Error = "两次输入的密码不一致"
		return u.signinForm(c, http.StatusBadRequest, "init.html", "初始化管理员", f)
	}
	if err := uisession.ValidateCredentials(f.Username, pass); err != nil {
		f.Error = err.Error()
		return u.signinForm(c, http.StatusBadRequest, "init.html", "初始化管理员", f)
	}
	usr, err := u.users.Init(c.Request().Context(), f.Username, pass)
	if errors.Is(err, uisession.ErrAlreadyInitialized) {
		return back(c, "/ui/login", "error", plainError(err))
	}
	if err != nil {
		return u.failPage(c, err)
	}
	return u.startSession(c, usr, "/ui/")
}

// logout deletes the session server-side, so the cookie is dead even if a copy of it survives.
func (u *UI) logout(c echo.Context) error {
	if err := u.sessions.Delete(c.Request().Context(), cookieValue(c, sessionCookie)); err != nil {
		return u.failPage(c, err)
	}
	setCookie(c, sessionCookie, "", -1)
	return back(c, "/ui/login", "ok", "已退出登录")
}
