package ui

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

type queueData struct {
	Summary    *listing.Queue
	ProjectID  string
	Tasks      []*taskecho.Task
	Pager      pager
	Status     string
	ResetCount int // tasks reset and re-run touch
	ErrorCount int // tasks reset-error touches
	URL        string
}

// queuePage shows a queue's tasks with source and pull state, the queue operations with how
// many tasks each would touch, and batch actions on selected tasks.
func (u *UI) queuePage(c echo.Context) error {
	ctx := c.Request().Context()
	pid, qid := param(c, "pid"), param(c, "qid")
	d := queueData{ProjectID: pid, Status: c.QueryParam("status"), URL: queueURL(pid, qid)}
	if _, ok := taskecho.NormalizeStatus(d.Status, taskecho.AllStatuses...); !ok {
		d.Status = ""
	}
	var err error
	if d.Summary, err = u.lists.Queue(ctx, pid, qid); err != nil {
		return u.failPage(c, err)
	}
	if d.ResetCount, d.ErrorCount, err = u.opCounts(c, pid, qid); err != nil {
		return u.failPage(c, err)
	}
	pg := pageOf(c, tasksPerPage)
	ts, total, err := u.lists.Tasks(ctx, pid, &qid, listing.TaskQuery{Page: listing.Page{Page: pg.Page, Size: pg.Size}, Status: d.Status})
	if err != nil {
		return u.failPage(c, err)
	}
	d.Tasks, d.Pager = ts, pg.with(total, c)
	name := d.Summary.Queue.Name
	if name == "" {
		name = qid
	}
	return u.render(c, http.StatusOK, "queue.html", name, "home", d)
}

// opCounts asks the service how many tasks reset (and re-run, which selects the same tasks) and
// reset-error would touch.
func (u *UI) opCounts(c echo.Context, pid, qid string) (all, errored int, err error) {
	ctx := c.Request().Context()
	if all, err = u.svc.QueueOps.CountQueueOp(ctx, queueop.Op{ProjectID: pid, QueueID: qid, Operation: queueop.Reset}); err != nil {
		return 0, 0, err
	}
	errored, err = u.svc.QueueOps.CountQueueOp(ctx, queueop.Op{ProjectID: pid, QueueID: qid, Operation: queueop.ResetError})
	return all, errored, err
}

func (u *UI) createQueueTask(c echo.Context) error {
	pid, qid := param(c, "pid"), param(c, "qid")
	f, err := taskecho.ParseTaskCreate(taskBody(c, true))
	if err == nil {
		_, err = u.svc.Admin.CreateTask(c.Request().Context(), actor(c), pid, &qid, f)
	}
	return u.done(c, queueURL(pid, qid), err, "任务已创建")
}

// batchAction applies "reset-pull" or "delete" to the selected tasks of the queue page, each
// through the same service call as the single-task action; failures are counted and named.
func (u *UI) batchAction(c echo.Context) error {
	ctx := c.Request().Context()
	pid, qid := param(c, "pid"), param(c, "qid")
	ids := taskIDs(c, tasksPerPage)
	target := queueURL(pid, qid)
	if len(ids) == 0 {
		return back(c, target, "error", "请先勾选任务")
	}
	var do func(taskecho.TaskRef) error
	var verb string
	switch c.FormValue("action") {
	case "reset-pull":
		verb = "重置拉取状态"
		do = func(r taskecho.TaskRef) error { _, _, err := u.svc.Leases.ResetPull(ctx, actor(c), r); return err }
	case "delete":
		verb = "删除"
		do = func(r taskecho.TaskRef) error { _, err := u.svc.Admin.DeleteTask(ctx, actor(c), r); return err }
	default:
		return back(c, target, "error", "未知的批量操作")
	}
	var firstErr error
	firstID, failed := "", 0
	for _, id := range ids {
		if err := do(taskecho.TaskRef{ProjectID: pid, QueueID: &qid, TaskID: id}); err != nil {
			failed++
			if firstErr == nil {
				firstID, firstErr = id, err
			}
		}
	}
	if failed > 0 {
		u.logErr(c, firstErr)
		return back(c, target, "error", fmt.Sprintf("%s：成功 %d 个，失败 %d 个（%s：%s）", verb, len(ids)-failed, failed, firstID, plainError(firstErr)))
	}
	return back(c, target, "ok", fmt.Sprintf("已%s %d 个任务", verb, len(ids)))
}
