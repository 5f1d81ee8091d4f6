package taskecho

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
)

// stats answers GET /api/v1/stats: live counts over all projects, or over its own project for a
// project-bound key.
func (a *api) stats(c echo.Context) error {
	st, err := a.lists.Totals(c.Request().Context(), boundProject(c))
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, st, "查询成功")
}

// audit is GET /api/v1/audit for admins: ?project_id, ?action, page/pageSize, newest first.
func (a *api) audit(c echo.Context) error {
	pg, err := page(c, 50)
	if err != nil {
		return err
	}
	q := stats.AuditQuery{ProjectID: c.QueryParam("project_id"), Action: c.QueryParam("action"), Page: pg.Page, PageSize: pg.Size}
	if id := auth.From(c); id != nil && id.ProjectID != "" {
		if q.ProjectID != "" && q.ProjectID != id.ProjectID {
			return auth.RequireProject(c, q.ProjectID)
		}
		q.ProjectID = id.ProjectID
	}
	rows, total, err := a.reports.Audit(c.Request().Context(), q)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, pagination(rows, pg, total), "查询成功")
}

// statsRange reads startDate/endDate (default: the last 30 days up to today, UTC) and the
// optional projectId, which a project-bound key must match.
func statsRange(c echo.Context) (stats.Range, error) {
	now := timeNow()
	r := stats.Range{Start: now.AddDate(0, 0, -29).Format(dateLayout), End: now.Format(dateLayout), ProjectID: c.QueryParam("projectId")}
	for name, dst := range map[string]*string{"startDate": &r.Start, "endDate": &r.End} {
		if v := c.QueryParam(name); v != "" {
			t, ok := taskecho.ParseTime(v)
			if !ok {
				return r, httpx.Validation(name, name+" 必须是有效的日期")
			}
			*dst = t.Format(dateLayout)
		}
	}
	if r.Start > r.End {
		return r, httpx.Validation("startDate", "startDate 不能晚于 endDate")
	}
	if id := auth.From(c); id != nil && id.ProjectID != "" {
		if r.ProjectID == "" {
			r.ProjectID = id.ProjectID
		}
		if err := auth.RequireProject(c, r.ProjectID); err != nil {
			return r, err
		}
	}
	return r, nil
}

const dateLayout = "2006-01-02"

func (a *api) executions(c echo.Context) (stats.Range, []taskecho.Execution, error) {
	r, err := statsRange(c)
	if err != nil {
		return r, nil, err
	}
	rows, err := a.reports.Executions(c.Request().Context(), r)
	if err != nil {
		return r, nil, fail(err)
	}
	return r, rows, nil
}

// statsSystem answers GET /api/v1/stats/system.
func (a *api) statsSystem(c echo.Context) error {
	r, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	return ok(c, http.StatusOK, map[string]any{"summary": stats.Summarize(rows), "daily_stats": stats.Daily(rows, r)}, "查询成功")
}

// statsProjects answers GET /api/v1/stats/projects.
func (a *api) statsProjects(c echo.Context) error {
	_, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, g := range stats.GroupBy(rows, func(e taskecho.Execution) string { return e.ProjectID }) {
		out = append(out, map[string]any{"project_id": g.Key, "project_name": g.Name, "summary": g.Summary})
	}
	return ok(c, http.StatusOK, map[string]any{"projects": out}, "查询成功")
}

// statsProject answers GET /api/v1/stats/project/{projectId}.
func (a *api) statsProject(c echo.Context) error {
	p, err := a.pathProject(c)
	if err != nil {
		return err
	}
	pid := p.ProjectID
	c.QueryParams().Set("projectId", pid)
	r, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	return ok(c, http.StatusOK, map[string]any{"project_id": pid, "project_name": p.Name, "summary": stats.Summarize(rows),
		"daily_stats": stats.Daily(rows, r)}, "查询成功")
}

// statsByHour answers GET /api/v1/stats/by-hour: 24 hourly buckets of one UTC date (?date=YYYY-MM-DD, default today).
func (a *api) statsByHour(c echo.Context) error {
	date := timeNow().Format(dateLayout)
	if v := c.QueryParam("date"); v != "" {
		t, ok := taskecho.ParseTime(v)
		if !ok {
			return httpx.Validation("date", "date 必须是 YYYY-MM-DD")
		}
		date = t.Format(dateLayout)
	}
	c.QueryParams().Set("startDate", date)
	c.QueryParams().Set("endDate", date)
	_, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	hours := make([]stats.Counts, 24)
	for _, e := range rows {
		h := &hours[e.Hour]
		h.Total++
		if e.Result == "success" {
			h.Success++
		} else {
			h.Failure++
		}
	}
	out := make([]map[string]any, 24)
	for h := range hours {
		out[h] = map[string]any{"hour": h, "execution": hours[h]}
	}
	return ok(c, http.StatusOK, map[string]any{"date": date, "hourly_stats": out}, "查询成功")
}

// statsGrouped answers GET /api/v1/stats/by-queue and GET /api/v1/stats/by-client (by client hostname).
func (a *api) statsGrouped(listKey, itemKey string, key func(taskecho.Execution) string) echo.HandlerFunc {
	return func(c echo.Context) error {
		_, rows, err := a.executions(c)
		if err != nil {
			return err
		}
		out := []map[string]any{}
		for _, g := range stats.GroupBy(rows, key) {
			out = append(out, map[string]any{itemKey: g.Key, "summary": g.Summary})
		}
		return ok(c, http.StatusOK, map[string]any{listKey: out}, "查询成功")
	}
}

var errorLabels = map[string]string{"timeout": "超时", "network": "网络", "validation": "验证", "permission": "权限",
	"not_found": "未找到", "other": "其他", "unknown": "未知"}

// statsErrorTypes answers GET /api/v1/stats/error-types.
func (a *api) statsErrorTypes(c echo.Context) error {
	_, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	counts, failures := map[string]int{}, 0
	for _, e := range rows {
		if e.Result == "failure" {
			counts[e.ErrorType]++
			failures++
		}
	}
	out := []map[string]any{}
	for typ, n := range counts {
		label, known := errorLabels[typ]
		if !known {
			label = errorLabels["unknown"]
		}
		out = append(out, map[string]any{"type": typ, "count": n, "label": label,
			"percentage": float64(int(float64(n)/float64(failures)*1000+0.5)) / 10})
	}
	return ok(c, http.StatusOK, map[string]any{"error_types": out}, "查询成功")
}

// statsDuration answers GET /api/v1/stats/execution-duration (milliseconds, from the time the task last became pending).
func (a *api) statsDuration(c echo.Context) error {
	_, rows, err := a.executions(c)
	if err != nil {
		return err
	}
	ranges := []struct {
		label string
		upTo  int64
	}{{"0-1分钟", 60_000}, {"1-5分钟", 300_000}, {"5-10分钟", 600_000}, {"10分钟以上", -1}}
	dist := make([]int, len(ranges))
	var total, minD, maxD int64
	n := 0
	for _, e := range rows {
		if e.DurationMS == nil {
			continue
		}
		d := *e.DurationMS
		if n == 0 || d < minD {
			minD = d
		}
		maxD = max(maxD, d)
		total += d
		n++
		for i, r := range ranges {
			if r.upTo < 0 || d < r.upTo {
				dist[i]++
				break
			}
		}
	}
	avg := int64(0)
	if n > 0 {
		avg = total / int64(n)
	}
	out := make([]map[string]any, len(ranges))
	for i, r := range ranges {
		out[i] = map[string]any{"range": r.label, "count": dist[i]}
	}
	return ok(c, http.StatusOK, map[string]any{"summary": map[string]any{"avg_duration": avg, "min_duration": minD,
		"max_duration": maxD, "total_count": n}, "distribution": out}, "查询成功")
}
