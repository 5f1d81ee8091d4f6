package ui

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages maps a page file name (e.g. "home.html") to its template, parsed together with the
// layout so every page shares the header, flash area and footer.
type pages map[string]*template.Template

func parsePages() (pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("ui templates: %w", err)
	}
	out := pages{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("ui template %s: %w", base, err)
		}
		out[base] = t
	}
	return out, nil
}

func staticHandler() echo.HandlerFunc {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServer(http.FS(sub)))
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=300")
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// flash is a one-shot message shown on the next page after a redirect.
type flash struct {
	Kind string `json:"k"` // ok | error
	Text string `json:"t"`
}

const flashCookie = "taskloom_flash"

func setFlash(c echo.Context, kind, text string) {
	b, _ := json.Marshal(flash{Kind: kind, Text: text})
	setCookie(c, flashCookie, base64.RawURLEncoding.EncodeToString(b), 60)
}

func takeFlash(c echo.Context) *flash {
	v := cookieValue(c, flashCookie)
	if v == "" {
		return nil
	}
	setCookie(c, flashCookie, "", -1)
	b, err := base64.RawURLEncoding.DecodeString(v)
	var f flash
	if err != nil || json.Unmarshal(b, &f) != nil || f.Text == "" {
		return nil
	}
	return &f
}

// view is what every page template receives; D is the page's own data.
type view struct {
	Title string
	Nav   string
	User  string
	CSRF  string
	Admin bool
	Flash *flash
	D     any
}

// render writes page name with status; the session (when there is one) fills the header.
func (u *UI) render(c echo.Context, status int, name, title, nav string, d any) error {
	t, ok := u.pages[name]
	if !ok {
		return fmt.Errorf("ui: no template %s", name)
	}
	v := view{Title: title, Nav: nav, Flash: takeFlash(c), D: d}
	if s := sessionFrom(c); s != nil {
		v.User, v.CSRF, v.Admin = s.Username, s.CSRF, s.Admin()
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// back redirects to target after a form post (post/redirect/get), with a flash message.
func back(c echo.Context, target, kind, text string) error {
	setFlash(c, kind, text)
	return c.Redirect(http.StatusSeeOther, target)
}

// done redirects with a success message, or with the error in plain words.
func (u *UI) done(c echo.Context, target string, err error, okText string) error {
	if err != nil {
		u.logErr(c, err)
		return back(c, target, "error", plainError(err))
	}
	return back(c, target, "ok", okText)
}

func (u *UI) logErr(c echo.Context, err error) {
	u.p.Log.WarnContext(c.Request().Context(), "ui action failed", "path", c.Request().URL.Path, "err", err)
}

// failPage renders an error page for a GET that could not be served.
func (u *UI) failPage(c echo.Context, err error) error {
	u.logErr(c, err)
	return u.render(c, statusOf(err), "error.html", "出错了", "", plainError(err))
}

func (u *UI) forbidden(c echo.Context, msg string) error {
	return u.render(c, http.StatusForbidden, "error.html", "请求被拒绝", "", msg)
}
