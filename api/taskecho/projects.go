package taskecho

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

func (a *api) listProjects(c echo.Context) error {
	pg, err := page(c, 100)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	items := []map[string]any{}
	// A project-bound key sees only its project.
	if id := auth.From(c); id != nil && id.ProjectID != "" {
		s, err := a.lists.Project(ctx, id.ProjectID)
		if err != nil && !taskecho.IsKind(err, taskecho.KindNotFound) {
			return fail(err)
		}
		if s != nil {
			items = append(items, projectView(s))
		}
		return ok(c, http.StatusOK, pagination(items, pg, int64(len(items))), "查询成功")
	}
	list, total, err := a.lists.Projects(ctx, pg, c.QueryParam("search"), taskecho.NormalizeTags(csv(c.QueryParam("tags"))))
	if err != nil {
		return fail(err)
	}
	for i := range list {
		items = append(items, projectView(&list[i]))
	}
	return ok(c, http.StatusOK, pagination(items, pg, total), "查询成功")
}

func (a *api) projectsCheck(c echo.Context) error {
	bound := ""
	if id := auth.From(c); id != nil {
		bound = id.ProjectID
	}
	v, err := a.lists.ProjectsVersion(c.Request().Context(), bound)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, versionView(v), "操作成功")
}

func versionView(v *listing.Version) map[string]any {
	return map[string]any{"version": v.Version, "last_updated_at": ts(v.LastUpdatedAt), "count": v.Count}
}

func (a *api) projectTags(c echo.Context) error {
	limit, err := intQuery(c, "limit", 50)
	if err != nil || limit < 1 {
		return httpx.Validation("limit", "limit 必须是正整数")
	}
	// A project-bound key counts its own project's tags only.
	tags, err := a.svc.Admin.PopularTags(c.Request().Context(), min(limit, 100), boundProject(c))
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"tags": tags, "count": len(tags)}, "获取常用标签成功")
}

func (a *api) getProject(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	s, err := a.lists.Project(c.Request().Context(), pid)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, projectView(s), "查询成功")
}

// updateProject renames a project and/or sets its push conflict policy.
func (a *api) updateProject(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	var req struct {
		Name           *string `json:"name"`
		ConflictPolicy string  `json:"conflict_policy"`
	}
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	name := ""
	if req.Name != nil || req.ConflictPolicy == "" {
		if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
			return httpx.Validation("name", "项目名称不能为空")
		}
		if len([]rune(*req.Name)) > 255 {
			return httpx.Validation("name", "项目名称长度不能超过 255 字符")
		}
		name = strings.TrimSpace(*req.Name)
	}
	if req.ConflictPolicy != "" && req.ConflictPolicy != taskecho.ConflictOverwrite && req.ConflictPolicy != taskecho.ConflictReject {
		return httpx.Validation("conflict_policy", "conflict_policy 必须是 overwrite 或 reject")
	}
	p, err := a.svc.Admin.RenameProject(c.Request().Context(), actor(c), pid, name, req.ConflictPolicy)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"id": p.ID.Hex(), "project_id": p.ProjectID, "name": p.Name,
		"conflict_policy": p.ConflictPolicy, "updated_at": ts(p.UpdatedAt)}, "项目更新成功")
}

func (a *api) deleteProject(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	if err := a.svc.Admin.DeleteProject(c.Request().Context(), actor(c), pid); err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"project_id": pid}, "项目删除成功")
}

func metadataView(p *taskecho.Project) map[string]any {
	if p.Metadata == nil {
		return map[string]any{"projectId": p.ProjectID, "customTitle": nil, "notes": nil, "tags": []string{}}
	}
	m := p.Metadata
	return map[string]any{"projectId": p.ProjectID, "customTitle": strOrNil(m.CustomTitle), "notes": strOrNil(m.Notes),
		"tags": m.Tags, "createdAt": ts(m.CreatedAt), "updatedAt": ts(m.UpdatedAt)}
}

// pathProject is the path's project once the caller may see it: the path's project id checked
// against the caller's key (project), then the project read (fail maps a missing one to 404).
func (a *api) pathProject(c echo.Context) (*taskecho.Project, error) {
	pid, err := project(c)
	if err != nil {
		return nil, err
	}
	p, err := a.svc.Lookup.Project(c.Request().Context(), pid)
	if err != nil {
		return nil, fail(err)
	}
	return p, nil
}

func (a *api) getMetadata(c echo.Context) error {
	p, err := a.pathProject(c)
	if err != nil {
		return err
	}
	return ok(c, http.StatusOK, metadataView(p), "查询成功")
}

func (a *api) putMetadata(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	b, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	u, err := parseMetadata(b)
	if err != nil {
		return err
	}
	p, err := a.svc.Admin.SetMetadata(c.Request().Context(), pid, *u)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, metadataView(p), "更新成功")
}

// parseMetadata validates a PUT /api/v1/projects/{projectId}/metadata body with TaskEcho's limits.
func parseMetadata(b []byte) (*taskecho.MetadataUpdate, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil, httpx.Validation("body", "请求体解析失败: 需要 JSON 对象")
	}
	u := &taskecho.MetadataUpdate{}
	str := func(field string, max int, dst **string, set *bool) error {
		v, present := raw[field]
		if !present {
			return nil
		}
		*set = true
		if string(v) == "null" {
			return nil
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return httpx.Validation(field, field+" 必须是字符串")
		}
		if len([]rune(s)) > max {
			return httpx.Validation(field, field+" 长度不能超过 "+itoa(max)+" 个字符").WithDetail("maxLength", max)
		}
		*dst = &s
		return nil
	}
	if err := str("customTitle", 200, &u.CustomTitle, &u.CustomTitleSet); err != nil {
		return nil, err
	}
	if err := str("notes", 5000, &u.Notes, &u.NotesSet); err != nil {
		return nil, err
	}
	if v, present := raw["tags"]; present {
		u.TagsSet = true
		if json.Unmarshal(v, &u.Tags) != nil {
			return nil, httpx.Validation("tags", "tags 必须是字符串数组")
		}
		if len(u.Tags) > 20 {
			return nil, httpx.Validation("tags", "标签数量不能超过 20 个").WithDetail("maxCount", 20)
		}
		for i, t := range u.Tags {
			if len([]rune(t)) > 50 {
				return nil, httpx.Validation("tags["+itoa(i)+"]", "标签长度不能超过 50 个字符").WithDetail("maxLength", 50)
			}
		}
	}
	return u, nil
}

func (a *api) deleteMetadata(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	if err := a.svc.Admin.DeleteMetadata(c.Request().Context(), pid); err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, nil, "删除成功")
}
