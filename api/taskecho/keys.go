package taskecho

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// API-key management (GET/POST /api/v1/api-keys, GET/PUT/DELETE /api/v1/api-keys/{id}) over internal/auth's one key store. Keys are stored hashed, so
// show_key=true cannot reveal a key after creation (TaskEcho's reversible keys were a flaw);
// the plaintext is returned once, by POST.

func keyView(k auth.Key) map[string]any {
	var pid any
	if k.ProjectID != "" {
		pid = k.ProjectID
	}
	return map[string]any{"id": k.ID, "name": k.Name, "key": k.Prefix, "key_masked": k.Prefix, "project_id": pid,
		"permission": k.Permission, "is_active": k.Active, "created_at": ts(k.CreatedAt), "updated_at": ts(k.UpdatedAt),
		"last_used_at": tsp(k.LastUsedAt)}
}

func keyErr(err error, id string) error {
	if errors.Is(err, auth.ErrNotFound) {
		return httpx.New(http.StatusNotFound, "RESOURCE_NOT_FOUND", "API Key 不存在").WithDetail("id", id)
	}
	return httpx.FromStore(err)
}

// boundProject is the project a project-bound admin key is limited to ("" = all).
func boundProject(c echo.Context) string {
	if id := auth.From(c); id != nil {
		return id.ProjectID
	}
	return ""
}

func (a *api) listKeys(c echo.Context) error {
	pg, err := page(c, 20)
	if err != nil {
		return err
	}
	f := auth.ListFilter{ProjectID: c.QueryParam("project_id"), Skip: pg.Skip(), Limit: int64(pg.Size)}
	if b := boundProject(c); b != "" {
		f.ProjectID = b
	}
	if v := c.QueryParam("is_active"); v != "" {
		active := v == "true"
		f.Active = &active
	}
	keys, total, err := a.keys.List(c.Request().Context(), f)
	if err != nil {
		return httpx.FromStore(err)
	}
	items := make([]map[string]any, len(keys))
	for i, k := range keys {
		items[i] = keyView(k)
	}
	return ok(c, http.StatusOK, pagination(items, pg, total), "查询成功")
}

func (a *api) createKey(c echo.Context) error {
	var req struct {
		Name       string  `json:"name"`
		ProjectID  *string `json:"project_id"`
		Permission string  `json:"permission"`
	}
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Name) == "" || len([]rune(req.Name)) > 255 {
		return httpx.Validation("name", "API Key 名称不能为空且不能超过 255 个字符")
	}
	perm := auth.Permission(req.Permission)
	if req.Permission == "" {
		perm = auth.PermWrite
	}
	if !perm.Valid() {
		return httpx.Validation("permission", "permission 必须是 read、write 或 admin")
	}
	pid := ""
	if req.ProjectID != nil {
		pid = strings.TrimSpace(*req.ProjectID)
	}
	if b := boundProject(c); b != "" && pid != b {
		return httpx.Forbidden("this API key is bound to project " + b + "; it can only create keys for it")
	}
	ctx := c.Request().Context()
	if pid != "" {
		if _, err := a.svc.Lookup.Project(ctx, pid); err != nil {
			if taskecho.IsKind(err, taskecho.KindNotFound) {
				return httpx.Validation("project_id", "关联的项目不存在").WithDetail("project_id", pid)
			}
			return fail(err)
		}
	}
	k, plain, err := a.keys.Create(ctx, auth.NewKey{Name: strings.TrimSpace(req.Name), Permission: perm, ProjectID: pid})
	if err != nil {
		return httpx.FromStore(err)
	}
	v := keyView(k)
	v["key"] = plain
	return ok(c, http.StatusCreated, v, "API Key 创建成功")
}

// ownKey loads a key and checks a bound admin may manage it. Another project's key is answered
// like a missing one, so a bound admin cannot learn which key ids exist elsewhere.
func (a *api) ownKey(c echo.Context) (auth.Key, error) {
	id := c.Param("id")
	k, err := a.keys.Get(c.Request().Context(), id)
	if err == nil {
		if b := boundProject(c); b != "" && k.ProjectID != b {
			err = auth.ErrNotFound
		}
	}
	if err != nil {
		return auth.Key{}, keyErr(err, id)
	}
	return k, nil
}

func (a *api) getKey(c echo.Context) error {
	k, err := a.ownKey(c)
	if err != nil {
		return err
	}
	return ok(c, http.StatusOK, keyView(k), "查询成功")
}

func (a *api) updateKey(c echo.Context) error {
	k, err := a.ownKey(c)
	if err != nil {
		return err
	}
	var req map[string]json.RawMessage
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	u, err := keyUpdate(req)
	if err != nil {
		return err
	}
	if b := boundProject(c); b != "" && u.ProjectID != nil && *u.ProjectID != b {
		return httpx.Forbidden("this API key is bound to project " + b)
	}
	if u.ProjectID != nil && *u.ProjectID != "" {
		if _, err := a.svc.Lookup.Project(c.Request().Context(), *u.ProjectID); err != nil {
			if taskecho.IsKind(err, taskecho.KindNotFound) {
				return httpx.Validation("project_id", "关联的项目不存在").WithDetail("project_id", *u.ProjectID)
			}
			return fail(err)
		}
	}
	k, err = a.keys.Apply(c.Request().Context(), k.ID, u)
	if err != nil {
		return keyErr(err, k.ID)
	}
	return ok(c, http.StatusOK, keyView(k), "API Key 更新成功")
}

// keyUpdate validates a PUT /api/v1/api-keys/{id} body: any of name, project_id (null or "" unbinds), is_active
// (boolean), permission.
func keyUpdate(req map[string]json.RawMessage) (auth.Update, error) {
	var u auth.Update
	if raw, ok := req["name"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" || len([]rune(s)) > 255 {
			return u, httpx.Validation("name", "API Key 名称不能为空且不能超过 255 个字符")
		}
		s = strings.TrimSpace(s)
		u.Name = &s
	}
	if raw, ok := req["project_id"]; ok {
		s := ""
		if string(raw) != "null" && json.Unmarshal(raw, &s) != nil {
			return u, httpx.Validation("project_id", "project_id 必须是字符串或 null")
		}
		s = strings.TrimSpace(s)
		u.ProjectID = &s
	}
	if raw, ok := req["is_active"]; ok {
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return u, httpx.Validation("is_active", "is_active 必须是布尔值")
		}
		u.Active = &b
	}
	if raw, ok := req["permission"]; ok {
		var s string
		p := auth.Permission("")
		if json.Unmarshal(raw, &s) == nil {
			p = auth.Permission(s)
		}
		if !p.Valid() {
			return u, httpx.Validation("permission", "permission 必须是 read、write 或 admin")
		}
		u.Permission = &p
	}
	if u.Name == nil && u.ProjectID == nil && u.Active == nil && u.Permission == nil {
		return u, httpx.Validation("body", "请提供至少一个更新字段")
	}
	return u, nil
}

func (a *api) deleteKey(c echo.Context) error {
	k, err := a.ownKey(c)
	if err != nil {
		return err
	}
	if err := a.keys.Delete(c.Request().Context(), k.ID); err != nil {
		return keyErr(err, k.ID)
	}
	return ok(c, http.StatusOK, map[string]any{"id": k.ID}, "API Key 删除成功")
}
