package ui

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
)

// Pull management page bounds: every list and chart reads a fixed number of rows.
const (
	pendingShown = 200
	// auditWindow is the span of the charts, in hourly buckets.
	auditWindow = 24 * time.Hour
	auditStep   = time.Hour
	// auditRows caps the audit rows read per action for the charts.
	auditRows = 1000
)

// Audit actions the charts read: a pull call (Count tasks), successful lease endings and
// releases. They are the service's own record of what happened ("拉取审计").
var (
	pushActions    = []string{"push-close", "confirm"}
	releaseActions = []string{"release", "lease-timeout", "pull-reset"}
)

// durationBins are the histogram's upper bounds and labels (pull → push/confirm).
var durationBins = []struct {
	upTo  time.Duration
	label string
}{{time.Minute, "<1分"}, {5 * time.Minute, "1–5分"}, {15 * time.Minute, "5–15分"}, {30 * time.Minute, "15–30分"},
	{time.Hour, "30–60分"}, {2 * time.Hour, "1–2时"}, {0, ">2时"}}

var timeouts = []struct{ Value, Label string }{{"0s", "全部进行中"}, {"10m", "超过 10 分钟"}, {"1h", "超过 1 小时"}, {"6h", "超过 6 小时"}, {"24h", "超过 24 小时"}}

type pullsData struct {
	ProjectID string
	Projects  []listing.Project
	Stats     *stats.Pulls
	Timeline  template.HTML
	Histogram template.HTML
	Durations int
	Pending   []*taskecho.Task
	// PendingTotal counts the pulled-but-not-pushed tasks the filter selects; More of them are
	// not shown.
	PendingTotal int
	More         int
	Timeout      string
	Timeouts     []struct{ Value, Label string }
	Lookup       *lookupResult
	TaskQuery    string
	Queue        string
	Back         string
}

type lookupResult struct {
	Task *taskecho.Task
	Err  string
}

// pullsPage is pull management for one project: success rate and mean pull→push time, charts
// of pulls and lease endings over the last day and of pull→push durations, the pulled but not
// pushed tasks with batch release, and the pull history of any task.
func (u *UI) pullsPage(c echo.Context) error {
	ctx := c.Request().Context()
	d := pullsData{ProjectID: strings.TrimSpace(c.QueryParam("project")), Timeout: c.QueryParam("timeout"), Timeouts: timeouts,
		TaskQuery: strings.TrimSpace(c.QueryParam("task")), Queue: strings.TrimSpace(c.QueryParam("queue"))}
	if d.ProjectID == "" {
		ps, _, err := u.lists.Projects(ctx, listing.Page{Page: 1, Size: projectsPerPage}, "", nil)
		if err != nil {
			return u.failPage(c, err)
		}
		d.Projects = ps
		return u.render(c, http.StatusOK, "pulls.html", "拉取管理", "pulls", d)
	}
	if _, err := u.svc.Lookup.Project(ctx, d.ProjectID); err != nil {
		return u.failPage(c, err)
	}
	// Unfiltered by default: the list then holds what the "已拉取未推送" card counts.
	timeout, err := time.ParseDuration(d.Timeout)
	if err != nil || timeout < 0 {
		d.Timeout, timeout = "0s", 0
	}
	if d.Stats, err = u.stats.Pulls(ctx, d.ProjectID); err != nil {
		return u.failPage(c, err)
	}
	if err := u.charts(ctx, &d); err != nil {
		return u.failPage(c, err)
	}
	pending, total, err := u.stats.PendingPulls(ctx, d.ProjectID, timeout, pendingShown)
	if err != nil {
		return u.failPage(c, err)
	}
	d.Pending, d.PendingTotal, d.More = pending, total, total-len(pending)
	if d.TaskQuery != "" {
		d.Lookup = u.lookup(ctx, d.ProjectID, d.TaskQuery, d.Queue)
	}
	d.Back = c.Request().URL.RequestURI()
	return u.render(c, http.StatusOK, "pulls.html", "拉取管理", "pulls", d)
}

// lookup finds a task for the history lookup: in the given queue, or project-level first and
// then any queue (the service's project-wide task rule).
func (u *UI) lookup(ctx context.Context, pid, tid, queue string) *lookupResult {
	ref := taskecho.TaskRef{ProjectID: pid, TaskID: tid, QueueID: queueOrNil(queue), AnyQueue: queue == ""}
	t, err := u.svc.Lookup.Task(ctx, ref, true)
	if err != nil {
		return &lookupResult{Err: plainError(err)}
	}
	return &lookupResult{Task: t}
}

// charts fills the timeline and the duration histogram from the audit log.
func (u *UI) charts(ctx context.Context, d *pullsData) error {
	now := time.Now().UTC()
	start := now.Add(-auditWindow).Truncate(auditStep).Add(auditStep)
	n := int(auditWindow / auditStep)
	pulls, err := u.audit(ctx, d.ProjectID, "pull")
	if err != nil {
		return err
	}
	pushes, err := u.audit(ctx, d.ProjectID, pushActions...)
	if err != nil {
		return err
	}
	releases, err := u.audit(ctx, d.ProjectID, releaseActions...)
	if err != nil {
		return err
	}
	bucket := func(es []taskecho.AuditEntry) []int {
		out := make([]int, n)
		for _, e := range es {
			if i := int(e.At.Sub(start) / auditStep); i >= 0 && i < n {
				out[i] += max(e.Count, 1)
			}
		}
		return out
	}
	d.Timeline = timelineSVG(start, auditStep, []series{
		{Name: "拉取", Class: "pulls", Counts: bucket(pulls)},
		{Name: "推送/确认", Class: "pushes", Counts: bucket(pushes)},
		{Name: "释放/超时/重置", Class: "releases", Counts: bucket(releases)},
	})
	durs := pullToPush(pulls, pushes)
	counts := make([]int, len(durationBins))
	labels := make([]string, len(durationBins))
	for i, b := range durationBins {
		labels[i] = b.label
	}
	for _, dur := range durs {
		for i, b := range durationBins {
			if b.upTo == 0 || dur < b.upTo {
				counts[i]++
				break
			}
		}
	}
	d.Durations, d.Histogram = len(durs), histogramSVG(labels, counts)
	return nil
}

// audit reads the newest audit rows of the given actions (a fixed number of queries and rows).
func (u *UI) audit(ctx context.Context, pid string, actions ...string) ([]taskecho.AuditEntry, error) {
	var out []taskecho.AuditEntry
	for _, a := range actions {
		es, _, err := u.stats.Audit(ctx, stats.AuditQuery{ProjectID: pid, Action: a, Page: 1, PageSize: auditRows})
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// pullToPush pairs each successful lease ending with its pull by lease_id (every audit row of
// a pull, push-close and confirm carries it) and returns the pull→push durations.
func pullToPush(pulls, pushes []taskecho.AuditEntry) []time.Duration {
	pulledAt := make(map[string]time.Time, len(pulls))
	for _, p := range pulls {
		if id, ok := p.Details["lease_id"].(string); ok {
			pulledAt[id] = p.At
		}
	}
	var out []time.Duration
	for _, p := range pushes {
		id, _ := p.Details["lease_id"].(string)
		if at, ok := pulledAt[id]; ok && !p.At.Before(at) {
			out = append(out, p.At.Sub(at))
		}
	}
	return out
}

// leaseRef is the checkbox value of a pending pull: the task's queue and id, so that a task id
// used in several queues is released exactly where it is leased.
func leaseRef(t *taskecho.Task) string {
	v := url.Values{"t": {t.TaskID}}
	if t.QueueID != nil {
		v.Set("q", *t.QueueID)
	}
	return v.Encode()
}

// releasePulls releases the selected leases, each with the service's Release (what the batch
// release endpoint does per task), and reports every failure by task.
func (u *UI) releasePulls(c echo.Context) error {
	ctx := c.Request().Context()
	pid := strings.TrimSpace(c.FormValue("project"))
	target := "/ui/pulls?project=" + url.QueryEscape(pid)
	if b := c.FormValue("back"); strings.HasPrefix(b, "/ui/pulls") {
		target = safeNext(b)
	}
	refs := taskIDs(c, pendingShown)
	if len(refs) == 0 {
		return back(c, target, "error", "请先勾选任务")
	}
	var failed []string
	for _, raw := range refs {
		v, err := url.ParseQuery(raw)
		if err != nil || v.Get("t") == "" {
			failed = append(failed, raw+"：无效的任务")
			continue
		}
		ref := taskecho.TaskRef{ProjectID: pid, TaskID: v.Get("t"), QueueID: queueOrNil(v.Get("q"))}
		if _, _, err := u.svc.Leases.Release(ctx, actor(c), ref, ""); err != nil {
			failed = append(failed, ref.TaskID+"："+plainError(err))
		}
	}
	if len(failed) > 0 {
		return back(c, target, "error", fmt.Sprintf("释放成功 %d 个，失败 %d 个（%s）", len(refs)-len(failed), len(failed), strings.Join(failed, "；")))
	}
	return back(c, target, "ok", fmt.Sprintf("已释放 %d 个任务的拉取锁定", len(refs)))
}
