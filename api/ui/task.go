package ui

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

type taskData struct {
	Task   *taskecho.Task
	Queues []listing.Queue
	URL    string
}

// refOf addresses the task of the request: the queue comes from ?queue= (pages) or the form's
// queue field (actions); none means the project-level task.
func refOf(c echo.Context) taskecho.TaskRef {
	q := c.QueryParam("queue")
	if c.Request().Method == http.MethodPost {
		q = c.FormValue("queue")
	}
	return taskecho.TaskRef{ProjectID: param(c, "pid"), TaskID: param(c, "tid"), QueueID: queueOrNil(q)}
}

// backTo is where an action returns: the form's back field when it points into the UI, else
// the task's own page.
func backTo(c echo.Context, ref taskecho.TaskRef) string {
	if b := c.FormValue("back"); strings.HasPrefix(b, "/ui/") {
		return safeNext(b)
	}
	return taskURL(ref.ProjectID, ref.QueueID, ref.TaskID)
}

// taskPage shows one task: source, times, priority, expiry, the full pull history and the
// forms to edit, move, delete, reset its pull state and re-run it.
func (u *UI) taskPage(c echo.Context) error {
	ctx := c.Request().Context()
	ref := refOf(c)
	t, err := u.svc.Lookup.Task(ctx, ref, true)
	if err != nil {
		return u.failPage(c, err)
	}
	qs, _, err := u.lists.Queues(ctx, ref.ProjectID, listing.Page{Page: 1, Size: queuesPerPage}, "")
	if err != nil {
		return u.failPage(c, err)
	}
	d := taskData{Task: t, Queues: qs, URL: taskURL(t.ProjectID, t.QueueID, t.TaskID)}
	return u.render(c, http.StatusOK, "task.html", t.Name, "home", d)
}

// editTask applies the edit form through the API's parser; editing a pulled task clears its
// pull state (the service's rule).
func (u *UI) editTask(c echo.Context) error {
	ref := refOf(c)
	f, err := taskecho.ParseTaskEdit(taskBody(c, false))
	var t *taskecho.Task
	if err == nil {
		t, err = u.svc.Admin.EditTask(c.Request().Context(), actor(c), ref, f)
	}
	msg := "任务已保存"
	if err == nil && t.PulledAt == nil && c.FormValue("was_pulled") == "1" {
		msg = "任务已保存，拉取状态已重置为未拉取"
	}
	return u.done(c, backTo(c, ref), err, msg)
}

// moveTask moves a task to another queue, or adds a project-level task to one.
func (u *UI) moveTask(c echo.Context) error {
	ref := refOf(c)
	to := queueOrNil(c.FormValue("to_queue"))
	res, err := u.svc.Admin.MoveTask(c.Request().Context(), actor(c), ref, to)
	target := backTo(c, ref)
	if err == nil && c.FormValue("back") == "" {
		target = taskURL(ref.ProjectID, res.Task.QueueID, ref.TaskID)
	}
	text := "任务已移到项目级"
	if to != nil {
		text = "任务已移到队列 " + *to
	}
	return u.done(c, target, err, text)
}

func (u *UI) deleteTask(c echo.Context) error {
	ref := refOf(c)
	_, err := u.svc.Admin.DeleteTask(c.Request().Context(), actor(c), ref)
	target := projectURL(ref.ProjectID)
	if ref.QueueID != nil {
		target = queueURL(ref.ProjectID, *ref.QueueID)
	}
	if err != nil {
		target = backTo(c, ref)
	}
	return u.done(c, target, err, "任务已删除（软删除，拉取历史保留）")
}

func (u *UI) resetPull(c echo.Context) error {
	ref := refOf(c)
	_, _, err := u.svc.Leases.ResetPull(c.Request().Context(), actor(c), ref)
	return u.done(c, backTo(c, ref), err, "拉取状态已重置，任务可重新拉取")
}

func (u *UI) reRunTask(c echo.Context) error {
	ref := refOf(c)
	_, _, err := u.svc.QueueOps.ReRunTask(c.Request().Context(), actor(c), ref)
	return u.done(c, backTo(c, ref), err, "任务已重新执行（状态改为 pending）")
}
