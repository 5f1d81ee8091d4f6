package ui

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
)

type keysData struct {
	Keys    []auth.Key
	Pager   pager
	Created *createdKey
	Perms   []auth.Permission
}

// createdKey is shown exactly once, in the response to the form that created it.
type createdKey struct {
	Key       auth.Key
	Plaintext string
}

func (u *UI) keysPage(c echo.Context) error { return u.renderKeys(c, http.StatusOK, nil) }

func (u *UI) renderKeys(c echo.Context, status int, created *createdKey) error {
	pg := pageOf(c, 20)
	keys, total, err := u.keys.List(c.Request().Context(), auth.ListFilter{Skip: pg.skip(), Limit: int64(pg.Size)})
	if err != nil {
		return u.failPage(c, err)
	}
	d := keysData{Keys: keys, Pager: pg.with(total, c), Created: created,
		Perms: []auth.Permission{auth.PermWrite, auth.PermRead, auth.PermAdmin}}
	return u.render(c, status, "keys.html", "API Keys", "keys", d)
}

// createKey stores a new key and shows its plaintext once; the page is not cached
// (Cache-Control: no-store) and the key is never put in a redirect or cookie.
func (u *UI) createKey(c echo.Context) error {
	ctx := c.Request().Context()
	nk := auth.NewKey{Name: strings.TrimSpace(c.FormValue("name")), Permission: auth.Permission(c.FormValue("permission")),
		ProjectID: strings.TrimSpace(c.FormValue("project_id"))}
	switch {
	case nk.Name == "":
		return back(c, "/ui/api-keys", "error", "名称不能为空")
	case len([]rune(nk.Name)) > 255:
		return back(c, "/ui/api-keys", "error", "名称不能超过 255 个字符")
	case !nk.Permission.Valid():
		return back(c, "/ui/api-keys", "error", "权限必须是 read、write 或 admin")
	}
	if nk.ProjectID != "" {
		if _, err := u.svc.Lookup.Project(ctx, nk.ProjectID); err != nil {
			if taskecho.IsKind(err, taskecho.KindNotFound) {
				return back(c, "/ui/api-keys", "error", "关联的项目不存在："+nk.ProjectID)
			}
			return u.done(c, "/ui/api-keys", err, "")
		}
	}
	k, plain, err := u.keys.Create(ctx, nk)
	if err != nil {
		return u.done(c, "/ui/api-keys", err, "")
	}
	return u.renderKeys(c, http.StatusCreated, &createdKey{Key: k, Plaintext: plain})
}

func (u *UI) deactivateKey(c echo.Context) error {
	err := u.keys.Revoke(c.Request().Context(), c.Param("kid"))
	return u.done(c, "/ui/api-keys", err, "API Key 已停用")
}
