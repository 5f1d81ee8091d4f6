package taskecho

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// pullFilter reads the pull query parameters: status (comma list), since, tags,
// created_after/before, modified_after/before, priority, limit, and at project level queue_id
// (one queue instead of the project's own tasks). project_only=true, which clients written for
// the earlier whole-project scope send, is the project pull's scope and needs no reading.
func (a *api) pullFilter(c echo.Context, pid string) (taskecho.PullFilter, error) {
	f := taskecho.PullFilter{ProjectID: pid}
	for _, s := range csv(c.QueryParam("status")) {
		st, valid := taskecho.NormalizeStatus(s, taskecho.AllStatuses...)
		if !valid {
			return f, httpx.Validation("status", "status 必须是 pending, running, done, error, cancelled 之一")
		}
		f.Statuses = append(f.Statuses, st)
	}
	f.Tags = csv(c.QueryParam("tags"))
	dates := []struct {
		name string
		dst  **time.Time
	}{
		{"created_after", &f.CreatedAfter}, {"created_before", &f.CreatedBefore},
		{"modified_after", &f.ModifiedAfter}, {"modified_before", &f.ModifiedBefore}, {"since", &f.ModifiedAfter},
	}
	for _, d := range dates {
		v := c.QueryParam(d.name)
		if v == "" {
			continue
		}
		t, valid := parseSince(v)
		if !valid {
			return f, httpx.Validation(d.name, d.name+" 必须是有效的日期时间")
		}
		*d.dst = &t
	}
	if v := c.QueryParam("priority"); v != "" {
		p, valid := taskecho.ParsePriorityFilter(v)
		if !valid {
			return f, httpx.Validation("priority", "priority 必须是 high, medium, low 或 1-10 的整数")
		}
		f.Priority = p
	}
	limit, err := intQuery(c, "limit", 0)
	if err != nil || limit < 0 {
		return f, httpx.Validation("limit", "limit 必须是非负整数")
	}
	f.Limit = limit
	if q := c.QueryParam("queue_id"); q != "" {
		f.QueueID = &q
	}
	return f, nil
}

// parseSince accepts an ISO date-time or a Unix timestamp in seconds or milliseconds.
func parseSince(v string) (time.Time, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > 1e11 {
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	return taskecho.ParseTime(v)
}

// doPull claims tasks within the caller's remaining daily quota and renders TaskEcho's pull
// answer plus the lease. exists checks the pulled project (and queue), answering the 404: it runs
// only when the pull handed out nothing, since a task handed out proves its project and queue
// exist (a task is stored under them and deleted with them), and a pull that found tasks pays
// no lookup.
func (a *api) doPull(c echo.Context, f taskecho.PullFilter, queueLabel string, exists func(context.Context) error) (*taskecho.PullResult, error) {
	if f.Limit == 0 || f.Limit > a.svc.Settings().PullBatchSize {
		f.Limit = a.svc.Settings().PullBatchSize
	}
	if left := quotaLeft(c); left >= 0 {
		f.Limit = min(f.Limit, left)
	}
	r, err := a.svc.Leases.Pull(c.Request().Context(), actor(c), f)
	if err != nil {
		return nil, fail(err)
	}
	if len(r.Tasks) == 0 {
		if err := exists(c.Request().Context()); err != nil {
			return nil, fail(err)
		}
	}
	// Counted once the project and queue are known to exist: a pull of made-up ids must not
	// create metric series.
	a.svc.Metrics().PullRequested(f.ProjectID, queueLabel)
	a.consume(c, len(r.Tasks))
	return r, nil
}

// projectExists is doPull's check of a project pull: the project exists.
func (a *api) projectExists(pid string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := a.svc.Lookup.Project(ctx, pid)
		return err
	}
}

func pullAnswer(r *taskecho.PullResult) map[string]any {
	tasks := make([]map[string]any, len(r.Tasks))
	for i, t := range r.Tasks {
		tasks[i] = pulledItem(t)
	}
	return map[string]any{"tasks": tasks, "count": len(tasks), "pulled_at": ts(r.PulledAt),
		"lease_id": r.LeaseID, "lease_expires_at": ts(r.LeaseExpiresAt)}
}

func (a *api) pullProject(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	f, err := a.pullFilter(c, pid)
	if err != nil {
		return err
	}
	label := ""
	if f.QueueID != nil {
		label = *f.QueueID
	}
	return a.answerPull(c, f, label, a.projectExists(pid))
}

func (a *api) pullQueue(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	qid := param(c, "queueId")
	f, err := a.pullFilter(c, pid)
	if err != nil {
		return err
	}
	f.QueueID = &qid
	return a.answerPull(c, f, qid, func(ctx context.Context) error {
		_, _, err := a.svc.Lookup.ProjectQueue(ctx, pid, qid, map[string]any{"queue_id": qid})
		return err
	})
}

// answerPull is doPull answered as the GET pulls (project and queue) answer: the tasks and
// how many were handed out.
func (a *api) answerPull(c echo.Context, f taskecho.PullFilter, queueLabel string, exists func(context.Context) error) error {
	r, err := a.doPull(c, f, queueLabel, exists)
	if err != nil {
		return err
	}
	return ok(c, http.StatusOK, pullAnswer(r), fmt.Sprintf("成功拉取 %d 个任务", len(r.Tasks)))
}

// pullBatch answers POST /api/v1/projects/{projectId}/tasks/pull/batch: body {taskIds?, filters?: {status?, tags?}, limit?}; the ids not handed out
// are listed in failed with the reason.
func (a *api) pullBatch(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	var req struct {
		TaskIDs []string `json:"taskIds"`
		Filters struct {
			Status json.RawMessage `json:"status"`
			Tags   []string        `json:"tags"`
		} `json:"filters"`
		Limit   int    `json:"limit"`
		QueueID string `json:"queue_id"`
	}
	if err := httpx.BindOptional(c, &req); err != nil {
		return err
	}
	f := taskecho.PullFilter{ProjectID: pid, TaskIDs: req.TaskIDs, Tags: req.Filters.Tags, Limit: req.Limit}
	if req.QueueID != "" {
		f.QueueID = &req.QueueID
	}
	if st, err := batchStatuses(req.Filters.Status); err != nil {
		return err
	} else {
		f.Statuses = st
	}
	if req.Limit < 0 {
		return httpx.Validation("limit", "limit 必须是非负整数")
	}
	r, err := a.doPull(c, f, "", a.projectExists(pid))
	if err != nil {
		return err
	}
	data := pullAnswer(r)
	failed := batchFailures(req.TaskIDs, r.Tasks)
	data["failed"], data["failed_count"] = failed, len(failed)
	msg := fmt.Sprintf("成功拉取 %d 个任务", len(r.Tasks))
	if len(failed) > 0 {
		msg += fmt.Sprintf("，%d 个任务失败", len(failed))
	}
	return ok(c, http.StatusOK, data, msg)
}

func batchStatuses(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return nil, httpx.Validation("filters.status", "filters.status 必须是字符串或字符串数组")
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		st, valid := taskecho.NormalizeStatus(s, taskecho.AllStatuses...)
		if !valid {
			return nil, httpx.Validation("filters.status", "status 必须是 pending, running, done, error, cancelled 之一")
		}
		out = append(out, st)
	}
	return out, nil
}

func batchFailures(requested []string, got []*taskecho.Task) []map[string]any {
	have := map[string]bool{}
	for _, t := range got {
		have[t.TaskID] = true
	}
	failed := []map[string]any{}
	for _, id := range requested {
		if !have[id] {
			failed = append(failed, map[string]any{"task_id": id, "reason": "任务不存在、已被拉取或不符合过滤条件"})
		}
	}
	return failed
}

// leaseBody is the optional body of release/confirm: the fencing token.
type leaseBody struct {
	LeaseID string   `json:"lease_id"`
	TaskIDs []string `json:"taskIds"`
}

// leaseRequest is the prelude of every release and confirm, one task's or a batch's: the
// project the caller may reach, and the body.
func leaseRequest(c echo.Context) (pid string, req leaseBody, err error) {
	if pid, err = project(c); err != nil {
		return "", req, err
	}
	err = httpx.BindOptional(c, &req)
	return pid, req, err
}

func (a *api) release(c echo.Context) error {
	return a.endLease(c, a.svc.Leases.Release, "released_at", "拉取锁定已释放")
}

func (a *api) confirm(c echo.Context) error {
	return a.endLease(c, a.svc.Leases.Confirm, "confirmed_at", "拉取已确认")
}

// endLease runs a release or confirm of the lease named in the body and answers with the task id
// and when the lease ended (under atKey).
func (a *api) endLease(c echo.Context, end func(context.Context, taskecho.Actor, taskecho.TaskRef, string) (*taskecho.Task, time.Time, error),
	atKey, message string) error {
	pid, req, err := leaseRequest(c)
	if err != nil {
		return err
	}
	t, at, err := end(c.Request().Context(), actor(c), projectRef(c, pid), req.LeaseID)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, atKey: ts(at)}, message)
}

// releaseBatchMissing is TaskEcho's batch-release reason for a task that is missing or not pulled.
const releaseBatchMissing = "任务不存在或未被拉取"

// batchAnswer is a batch release's or confirm's data, TaskEcho's shape: the tasks done (with
// atKey's time) and those that failed (with a reason, and a code where TaskEcho gives one), and
// its message: headline with the number done, then how many failed.
func batchAnswer(items []taskecho.BatchItem, doneKey, atKey, headline string) (map[string]any, string) {
	done, failed := []map[string]any{}, []map[string]any{}
	for _, it := range items {
		if it.Err == nil {
			done = append(done, map[string]any{"task_id": it.TaskID, atKey: ts(it.At)})
			continue
		}
		f := map[string]any{"task_id": it.TaskID, "reason": it.Err.Error()}
		k, _ := taskecho.KindOf(it.Err)
		switch {
		case k.Row().InBatch:
			f["code"] = k.Row().Code
		case doneKey == "released" && (k == taskecho.KindNotFound || k == taskecho.KindValidation):
			f["reason"] = releaseBatchMissing // TaskEcho's one reason for both
		}
		failed = append(failed, f)
	}
	msg := fmt.Sprintf(headline, len(done))
	if len(failed) > 0 {
		msg += fmt.Sprintf("，%d 个任务失败", len(failed))
	}
	return map[string]any{doneKey: done, "failed": failed, doneKey + "_count": len(done), "failed_count": len(failed)}, msg
}

func (a *api) releaseBatch(c echo.Context) error {
	return a.endLeaseBatch(c, a.svc.Leases.ReleaseBatch, true, "released", "released_at", "成功释放 %d 个任务的拉取锁定")
}

// confirmBatch confirms the tasks of one lease: body {lease_id, taskIds?} (all of the lease's
// tasks when taskIds is omitted).
func (a *api) confirmBatch(c echo.Context) error {
	return a.endLeaseBatch(c, a.svc.Leases.ConfirmBatch, false, "confirmed", "confirmed_at", "成功确认 %d 个任务")
}

// endLeaseBatch runs a batch release or confirm over the body's tasks of the body's lease and
// answers with batchAnswer. A release names its tasks (idsRequired); a confirm may leave them out.
func (a *api) endLeaseBatch(c echo.Context, end func(context.Context, taskecho.Actor, string, []string, string) ([]taskecho.BatchItem, error),
	idsRequired bool, doneKey, atKey, headline string) error {
	pid, req, err := leaseRequest(c)
	if err != nil {
		return err
	}
	if idsRequired && len(req.TaskIDs) == 0 {
		return httpx.Validation("taskIds", "taskIds 必须是非空数组")
	}
	items, err := end(c.Request().Context(), actor(c), pid, req.TaskIDs, req.LeaseID)
	if err != nil {
		return fail(err)
	}
	data, msg := batchAnswer(items, doneKey, atKey, headline)
	return ok(c, http.StatusOK, data, msg)
}

func (a *api) resetPull(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	t, at, err := a.svc.Leases.ResetPull(c.Request().Context(), actor(c), projectRef(c, pid))
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, "pulled_at": nil, "reset_at": ts(at)}, "拉取状态已重置")
}

func (a *api) pullHistory(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	t, err := a.svc.Lookup.Task(c.Request().Context(), projectRef(c, pid), false)
	if err != nil {
		return fail(err)
	}
	var current any
	if t.LeaseID != nil {
		current = map[string]any{"pulled_at": tsp(t.PulledAt), "pulled_by": strOrNil(t.PulledBy),
			"lease_id": *t.LeaseID, "lease_expires_at": tsp(t.LeaseExpiresAt)}
	}
	return ok(c, http.StatusOK, map[string]any{"task_id": t.TaskID, "current_pull": current,
		"pull_history": historyView(t.PullHistory), "total_pulls": len(t.PullHistory)}, "操作成功")
}

func (a *api) pullStats(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := a.svc.Lookup.Project(ctx, pid); err != nil {
		return fail(err)
	}
	st, err := a.reports.Pulls(ctx, pid)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, st, "操作成功")
}

func (a *api) pullPending(c echo.Context) error {
	pid, err := project(c)
	if err != nil {
		return err
	}
	secs, err := intQuery(c, "timeout", 3600)
	if err != nil || secs < 0 {
		return httpx.Validation("timeout", "timeout 必须是非负整数（秒）")
	}
	ctx := c.Request().Context()
	if _, err := a.svc.Lookup.Project(ctx, pid); err != nil {
		return fail(err)
	}
	list, _, err := a.reports.PendingPulls(ctx, pid, time.Duration(secs)*time.Second, 0)
	if err != nil {
		return fail(err)
	}
	now := timeNow()
	items := make([]map[string]any, len(list))
	for i, t := range list {
		kind := "project"
		if t.QueueID != nil {
			kind = "queue"
		}
		items[i] = map[string]any{"task_id": t.TaskID, "name": t.Name, "status": t.Status, "queue_id": strOrNil(t.QueueID),
			"pulled_at": tsp(t.PulledAt), "pulled_by": strOrNil(t.PulledBy), "lease_id": strOrNil(t.LeaseID),
			"lease_expires_at": tsp(t.LeaseExpiresAt), "timeout_hours": hours(now.Sub(*t.PulledAt)), "type": kind}
	}
	return ok(c, http.StatusOK, map[string]any{"tasks": items, "count": len(items), "timeout_seconds": secs,
		"timeout_hours": hours(time.Duration(secs) * time.Second)}, "查询成功")
}

func hours(d time.Duration) float64 { return float64(int(d.Hours()*10+0.5)) / 10 }
