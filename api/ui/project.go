package ui

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// Page sizes; each list is one count and one find whatever the project holds.
const (
	tasksPerPage  = 50
	queuesPerPage = 50
)

type projectData struct {
	Summary *listing.Project
	Queues  []listing.Queue
	QPager  pager
	Tasks   []*taskecho.Task
	Pager   pager
	Pulled  string
	Status  string
}

func projectURL(pid string) string { return "/ui/projects/" + url.PathEscape(pid) }

func queueURL(pid, qid string) string { return projectURL(pid) + "/queues/" + url.PathEscape(qid) }

func taskURL(pid string, qid *string, tid string) string {
	u := projectURL(pid) + "/tasks/" + url.PathEscape(tid)
	if qid != nil {
		u += "?queue=" + url.QueryEscape(*qid)
	}
	return u
}

// projectPage shows a project's queues and its project-level tasks (not in any queue) with
// their pull state, filtered by pulled / not pulled and status.
func (u *UI) projectPage(c echo.Context) error {
	ctx := c.Request().Context()
	pid := param(c, "pid")
	d := projectData{Pulled: c.QueryParam("pulled"), Status: c.QueryParam("status")}
	if d.Pulled != "pulled" && d.Pulled != "not_pulled" {
		d.Pulled = ""
	}
	if _, ok := taskecho.NormalizeStatus(d.Status, taskecho.AllStatuses...); !ok {
		d.Status = ""
	}
	var err error
	if d.Summary, err = u.lists.Project(ctx, pid); err != nil {
		return u.failPage(c, err)
	}
	qpg := pagerFrom(c.QueryParam("qpage"), queuesPerPage)
	qs, qtotal, err := u.lists.Queues(ctx, pid, listing.Page{Page: qpg.Page, Size: qpg.Size}, "")
	if err != nil {
		return u.failPage(c, err)
	}
	pg := pageOf(c, tasksPerPage)
	ts, total, err := u.lists.Tasks(ctx, pid, nil, listing.TaskQuery{Page: listing.Page{Page: pg.Page, Size: pg.Size},
		Status: d.Status, PulledStatus: d.Pulled})
	if err != nil {
		return u.failPage(c, err)
	}
	d.Queues, d.QPager, d.Tasks, d.Pager = qs, qpg.withParam(qtotal, c, "qpage"), ts, pg.with(total, c)
	return u.render(c, http.StatusOK, "project.html", projectTitle(d.Summary.Project), "home", d)
}

// createProjectTask adds a server task to the project, outside any queue.
func (u *UI) createProjectTask(c echo.Context) error {
	pid := param(c, "pid")
	f, err := taskecho.ParseTaskCreate(taskBody(c, true))
	if err == nil {
		_, err = u.svc.Admin.CreateTask(c.Request().Context(), actor(c), pid, nil, f)
	}
	return u.done(c, projectURL(pid), err, "任务已创建")
}
