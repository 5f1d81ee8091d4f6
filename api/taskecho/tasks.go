package taskecho

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// queueRef is the task addressed by a …/queues/{q}/tasks/{t} path.
func queueRef(c echo.Context, pid string) taskecho.TaskRef {
	q := param(c, "queueId")
	return taskecho.TaskRef{ProjectID: pid, QueueID: &q, TaskID: param(c, "taskId")}
}

// projectRef is the task addressed by a /projects/{p}/tasks/{t} path: the project-level task, or
// the queue task of that id (?queue_id= picks the queue when several hold the id).
func projectRef(c echo.Context, pid string) taskecho.TaskRef {
	ref := taskecho.TaskRef{ProjectID: pid, TaskID: param(c, "taskId"), AnyQueue: true}
	if q := c.QueryParam("queue_id"); q != "" {
		ref.QueueID = &q
	}
	return ref
}

func (a *api) listQueueTasks(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	qid := param(c, "queueId")
	pg, err := page(c, 20)
	if err != nil {
		return err
	}
	q := listing.TaskQuery{Page: pg, Tags: csv(c.QueryParam("tags"))}
	if s := c.QueryParam("status"); s != "" {
		st, valid := taskecho.NormalizeStatus(s, taskecho.AllStatuses...)
		if !valid {
			return httpx.Validation("status", "状态值无效，必须是 pending、running、done、error 或 cancelled")
		}
		q.Status = st
	}
	ctx := c.Request().Context()
	if _, _, err := a.svc.Lookup.ProjectQueue(ctx, pid, qid, map[string]any{"project_id": pid, "queue_id": qid}); err != nil {
		return fail(err)
	}
	list, total, err := a.lists.Tasks(ctx, pid, &qid, q)
	if err != nil {
		return fail(err)
	}
	items := make([]map[string]any, len(list))
	for i, t := range list {
		items[i] = queueTaskItem(t)
	}
	return ok(c, http.StatusOK, pagination(items, pg, total), "查询成功")
}

func (a *api) listProjectTasks(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	pg, err := page(c, 20)
	if err != nil {
		return err
	}
	q := listing.TaskQuery{Page: pg, PulledStatus: c.QueryParam("pulled_status")}
	if s := c.QueryParam("status"); s != "" {
		st, valid := taskecho.NormalizeStatus(s, taskecho.AllStatuses...)
		if !valid {
			return httpx.Validation("status", "status 必须是 pending, running, done, error, cancelled 之一")
		}
		q.Status = st
	}
	ctx := c.Request().Context()
	if _, err := a.svc.Lookup.Project(ctx, pid); err != nil {
		return fail(err)
	}
	list, total, err := a.lists.Tasks(ctx, pid, nil, q)
	if err != nil {
		return fail(err)
	}
	items := make([]map[string]any, len(list))
	for i, t := range list {
		items[i] = projectTaskItem(t)
	}
	return ok(c, http.StatusOK, pagination(items, pg, total), "查询成功")
}

func (a *api) queueTasksCheck(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	qid := param(c, "queueId")
	ctx := c.Request().Context()
	_, q, err := a.svc.Lookup.ProjectQueue(ctx, pid, qid, map[string]any{"project_id": pid, "queue_id": qid})
	if err != nil {
		return fail(err)
	}
	v, err := a.lists.TasksVersion(ctx, pid, qid)
	if err != nil {
		return fail(err)
	}
	if q.UpdatedAt.UnixMilli() > v.Version { // log appends move only the queue
		v.Version, v.LastUpdatedAt = q.UpdatedAt.UnixMilli(), q.UpdatedAt
	}
	return ok(c, http.StatusOK, versionView(v), "操作成功")
}

func (a *api) createTask(c echo.Context, pid string, queueID *string) error {
	ctx := c.Request().Context()
	if queueID != nil {
		if _, _, err := a.svc.Lookup.ProjectQueue(ctx, pid, *queueID, map[string]any{"queue_id": *queueID}); err != nil {
			return fail(err)
		}
	} else if _, err := a.svc.Lookup.Project(ctx, pid); err != nil {
		return fail(err)
	}
	b, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	f, err := taskecho.ParseTaskCreate(b)
	if err != nil {
		return fail(err)
	}
	t, err := a.svc.Admin.CreateTask(ctx, actor(c), pid, queueID, f)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusCreated, map[string]any{"task_id": t.TaskID, "name": t.Name, "status": t.Status,
		"source": t.Source, "queue_id": strOrNil(t.QueueID), "priority": priority(t), "expires_at": tsp(t.ExpiresAt),
		"created_at": ts(t.CreatedAt)}, "任务创建成功")
}

func (a *api) createQueueTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	q := param(c, "queueId")
	return a.createTask(c, pid, &q)
}

func (a *api) createProjectTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	return a.createTask(c, pid, nil)
}

func (a *api) getQueueTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	ref := queueRef(c, pid)
	if _, _, err := a.svc.Lookup.ProjectQueue(ctx, pid, *ref.QueueID, map[string]any{"project_id": pid, "queue_id": *ref.QueueID}); err != nil {
		return fail(err)
	}
	t, err := a.svc.Lookup.Task(ctx, ref, false)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, queueTaskView(t), "查询成功")
}

func (a *api) getProjectTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	t, err := a.svc.Lookup.Task(c.Request().Context(), projectRef(c, pid), false)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, projectTaskView(t), "操作成功")
}

func (a *api) editTask(c echo.Context, ref taskecho.TaskRef) error {
	b, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	f, err := taskecho.ParseTaskEdit(b)
	if err != nil {
		return fail(err)
	}
	t, err := a.svc.Admin.EditTask(c.Request().Context(), actor(c), ref, f)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, "name": t.Name, "status": t.Status, "source": t.Source,
		"updated_at": ts(t.UpdatedAt), "server_modified_at": tsp(t.ServerModifiedAt), "pulled_at": tsp(t.PulledAt),
		"priority": priority(t), "expires_at": tsp(t.ExpiresAt)}, "任务更新成功")
}

func (a *api) editQueueTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	return a.editTask(c, queueRef(c, pid))
}

func (a *api) editProjectTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	return a.editTask(c, projectRef(c, pid))
}

func (a *api) deleteTask(c echo.Context, ref taskecho.TaskRef) error {
	t, err := a.svc.Admin.DeleteTask(c.Request().Context(), actor(c), ref)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, "deleted_at": tsp(t.DeletedAt)}, "任务删除成功")
}

func (a *api) deleteQueueTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	return a.deleteTask(c, queueRef(c, pid))
}

func (a *api) deleteProjectTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	return a.deleteTask(c, projectRef(c, pid))
}

// moveTask answers POST /api/v1/projects/{projectId}/tasks/{taskId}/move: body {queue_id: string|null}; null moves to project level.
func (a *api) moveTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	var req struct {
		QueueID json.RawMessage `json:"queue_id"`
	}
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	var to *string
	if s := string(req.QueueID); s != "" && s != "null" {
		var q string
		if json.Unmarshal(req.QueueID, &q) != nil || q == "" {
			return httpx.Validation("queue_id", "queue_id 必须是字符串或 null")
		}
		to = &q
	}
	r, err := a.svc.Admin.MoveTask(c.Request().Context(), actor(c), projectRef(c, pid), to)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": r.Task.TaskID, "from": r.From, "to": r.To,
		"moved_at": ts(r.MovedAt), "pulled_at": tsp(r.Task.PulledAt), "lease_id": strOrNil(r.Task.LeaseID)}, "任务移动成功")
}

func (a *api) reRunTask(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	t, at, err := a.svc.QueueOps.ReRunTask(c.Request().Context(), actor(c), queueRef(c, pid))
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, "rerun_at": ts(at), "pulled_at": tsp(t.PulledAt)}, "任务重新执行成功")
}
