package ui

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho/queueop"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

// opExplain says in plain words what each queue operation does to tasks and their pull state.
var opExplain = map[string]string{
	queueop.Reset:      "reset：把队列中所有任务的状态重置为 pending，并重置它们的拉取状态，使任务重新可拉取。",
	queueop.ResetError: "reset-error：只把状态为 error 的任务重置为 pending，并重置这些任务的拉取状态。",
	queueop.ReRun:      "re-run：重新运行队列中的所有任务（状态改为 pending），并重置它们的拉取状态。",
}

type confirmData struct {
	ProjectID, QueueID, Op, Explain, URL, Back string
	Count                                      int
}

func (u *UI) queueOp(c echo.Context) (queueop.Op, bool) {
	op := queueop.Op{ProjectID: param(c, "pid"), QueueID: param(c, "qid"), Operation: c.Param("op")}
	return op, queueop.Valid(op.Operation)
}

// confirmQueueOp is the confirmation step: it shows how many tasks the operation will touch
// before anything changes.
func (u *UI) confirmQueueOp(c echo.Context) error {
	op, ok := u.queueOp(c)
	if !ok {
		return u.render(c, http.StatusNotFound, "error.html", "未知操作", "", "队列操作只能是 reset、reset-error 或 re-run")
	}
	ctx := c.Request().Context()
	if _, err := u.lists.Queue(ctx, op.ProjectID, op.QueueID); err != nil {
		return u.failPage(c, err)
	}
	n, err := u.svc.QueueOps.CountQueueOp(ctx, op)
	if err != nil {
		return u.failPage(c, err)
	}
	back := queueURL(op.ProjectID, op.QueueID)
	d := confirmData{ProjectID: op.ProjectID, QueueID: op.QueueID, Op: op.Operation, Explain: opExplain[op.Operation],
		URL: back + "/ops/" + op.Operation, Back: back, Count: n}
	return u.render(c, http.StatusOK, "confirm.html", "确认 "+op.Operation, "home", d)
}

// runQueueOp starts the confirmed queue operation exactly as POST …/reset (etc.) of the JSON API
// does — the QueueOperationWorkflow, joined when one already runs for the queue — and waits up
// to ECHO_QUEUE_OP_WAIT for its result.
func (u *UI) runQueueOp(c echo.Context) error {
	op, ok := u.queueOp(c)
	if !ok {
		return u.render(c, http.StatusNotFound, "error.html", "未知操作", "", "队列操作只能是 reset、reset-error 或 re-run")
	}
	target := queueURL(op.ProjectID, op.QueueID)
	ctx := c.Request().Context()
	if _, err := u.lists.Queue(ctx, op.ProjectID, op.QueueID); err != nil {
		return u.done(c, target, err, "")
	}
	op.Actor, op.At = actor(c).Name, time.Now().UTC().Truncate(time.Millisecond)
	if op.Operation == queueop.ResetError {
		n, err := u.svc.QueueOps.CountQueueOp(ctx, op)
		if err != nil || n == 0 {
			return u.done(c, target, err, "队列中没有错误任务")
		}
	}
	cfg := u.p.Config
	run, err := taskechowf.StartQueueOp(ctx, u.p.Temporal, cfg.Temporal.TaskQueue, op, cfg.Echo.QueueOpWait)
	if err != nil {
		return u.done(c, target, err, "")
	}
	if !run.Finished {
		return back(c, target, "ok", fmt.Sprintf("%s 已开始，仍在后台进行（操作 ID %s），稍后刷新查看结果", op.Operation, run.OpID))
	}
	return back(c, target, "ok", fmt.Sprintf("%s 完成：%d 个任务已重置", op.Operation, run.Result.Changed))
}
