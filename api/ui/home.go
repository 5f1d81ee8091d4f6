package ui

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// projectsPerPage bounds the home page: each listed project costs two count queries.
const projectsPerPage = 20

type homeData struct {
	Search   string
	Tag      string
	Tags     []string
	Projects []listing.Project
	Pager    pager
}

// home lists projects with search and tag filter and each project's task counts by status.
func (u *UI) home(c echo.Context) error {
	ctx := c.Request().Context()
	d := homeData{Search: strings.TrimSpace(c.QueryParam("q")), Tag: strings.TrimSpace(c.QueryParam("tag"))}
	var tags []string
	if d.Tag != "" {
		tags = []string{d.Tag}
	}
	pg := pageOf(c, projectsPerPage)
	ps, total, err := u.lists.Projects(ctx, listing.Page{Page: pg.Page, Size: pg.Size}, d.Search, tags)
	if err != nil {
		return u.failPage(c, err)
	}
	if d.Tags, err = u.svc.Admin.PopularTags(ctx, 50, ""); err != nil {
		return u.failPage(c, err)
	}
	d.Projects, d.Pager = ps, pg.with(total, c)
	return u.render(c, http.StatusOK, "home.html", "项目", "home", d)
}

// projectTitle is the name a project is shown under: its custom title, else its name.
func projectTitle(p *taskecho.Project) string {
	if p.Metadata != nil && p.Metadata.CustomTitle != nil && *p.Metadata.CustomTitle != "" {
		return *p.Metadata.CustomTitle
	}
	if p.Name != "" {
		return p.Name
	}
	return p.ProjectID
}
