package taskecho

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

func (a *api) listQueues(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	pg, err := page(c, 100)
	if err != nil {
		return err
	}
	list, total, err := a.lists.Queues(c.Request().Context(), pid, pg, c.QueryParam("search"))
	if err != nil {
		return fail(err)
	}
	items := make([]map[string]any, len(list))
	for i := range list {
		items[i] = queueView(&list[i])
	}
	return ok(c, http.StatusOK, pagination(items, pg, total), "查询成功")
}

func (a *api) queuesCheck(c echo.Context) error {
	p, err := a.pathProject(c)
	if err != nil {
		return err
	}
	v, err := a.lists.QueuesVersion(c.Request().Context(), p.ProjectID)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, versionView(v), "操作成功")
}

func (a *api) getQueue(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	s, err := a.lists.Queue(c.Request().Context(), pid, param(c, "queueId"))
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, queueView(s), "查询成功")
}

func (a *api) deleteQueue(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	qid := param(c, "queueId")
	if err := a.svc.Admin.DeleteQueue(c.Request().Context(), actor(c), pid, qid); err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"queue_id": qid}, "队列删除成功")
}

// queueOp runs reset / reset-error / re-run as a Temporal workflow and answers with the
// operation id and TaskEcho's counts; when the workflow has not finished within ECHO_QUEUE_OP_WAIT
// the answer is 202 with state "running".
func (a *api) queueOp(operation string) echo.HandlerFunc {
	return func(c echo.Context) error {
		pid, err := project(c)
		if err != nil {
			return err
		}
		qid := param(c, "queueId")
		ctx := c.Request().Context()
		if _, _, err := a.svc.Lookup.ProjectQueue(ctx, pid, qid, map[string]any{"queue_id": qid}); err != nil {
			return fail(err)
		}
		op := queueop.Op{ProjectID: pid, QueueID: qid, Operation: operation, Actor: actor(c).Name, At: timeNow()}
		count, err := a.svc.QueueOps.CountQueueOp(ctx, op)
		if err != nil {
			return fail(err)
		}
		if operation == queueop.ResetError && count == 0 {
			return ok(c, http.StatusOK, map[string]any{"queue_id": qid, "reset_tasks_count": 0}, "队列中没有错误任务")
		}
		run, err := taskechowf.StartQueueOp(ctx, a.temporal, a.taskQueue, op, a.opWait)
		if err != nil {
			return fail(err)
		}
		return a.queueOpAnswer(c, op, run, count)
	}
}

func (a *api) queueOpAnswer(c echo.Context, op queueop.Op, run *taskechowf.QueueOpRun, count int) error {
	state, status := "running", http.StatusAccepted
	if run.Finished {
		state, status, count = "completed", http.StatusOK, run.Result.Changed
	}
	data := map[string]any{"queue_id": op.QueueID, "operation": op.Operation, "op_id": run.OpID, "state": state,
		"cleared_pull_status": clearsPull(a.svc.Settings(), op.Operation)}
	var msg string
	switch op.Operation {
	case queueop.Reset:
		data["reset_tasks_count"], data["reset_at"] = count, ts(op.At)
		msg = fmt.Sprintf("成功重置队列，共 %d 个任务", count)
	case queueop.ResetError:
		data["reset_tasks_count"], data["reset_at"] = count, ts(op.At)
		msg = fmt.Sprintf("成功重置 %d 个错误任务", count)
	default:
		data["rerun_tasks_count"], data["rerun_at"] = count, ts(op.At)
		msg = fmt.Sprintf("成功重新运行队列，共 %d 个任务", count)
	}
	return ok(c, status, data, msg)
}

func clearsPull(s taskecho.Settings, op string) bool {
	if op == queueop.ReRun {
		return s.RerunClearPullStatus
	}
	return s.ResetClearPullStatus
}
