package ui

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/waiting"
)

var funcs = template.FuncMap{
	"when":      when,
	"deref":     func(p *string) string { return derefStr(p) },
	"esc":       url.PathEscape,
	"join":      strings.Join,
	"pull":      func(t *taskecho.Task) pullBadge { return pullStateOf(t, time.Now()) },
	"blocked":   func(t *taskecho.Task) *waiting.For { return taskecho.BlockedBy(t, time.Now()) },
	"priority":  priorityText,
	"isoLocal":  isoLocal,
	"statusCls": func(s string) string { return "st-" + s },
	"pct":       func(n int) string { return fmt.Sprintf("%d%%", n) },
	"secs":      secs,
	"title":     projectTitle,
	"statuses":  func() []string { return taskecho.AllStatuses },
	"dict":      dict,
	"pathOnly":  func(u string) string { p, _, _ := strings.Cut(u, "?"); return p },
	"reason":    reasonText,
	"leaseRef":  leaseRef,
	"pct100":    func(f float64) float64 { return f * 100 },
	"list":      func(s ...string) []string { return s },
	"i64":       i64Text,
	"taskLink":  func(t *taskecho.Task) string { return taskURL(t.ProjectID, t.QueueID, t.TaskID) },
	"refund":    refundText,
}

// dict passes several named values to a nested template.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}

// param is a path parameter as the user wrote it. Echo matches on the raw path when the URL
// holds escapes the decoded path cannot express (a queue id with "/" arrives as %2F), and then
// hands over the still-escaped segment.
func param(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// when formats a time (or *time.Time) in UTC; nil and zero render as "—".
func when(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x != nil {
			t = *x
		}
	}
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// isoLocal is the value of a datetime-local input (UTC, minutes).
func isoLocal(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04")
}

func secs(v *float64) string {
	if v == nil {
		return "—"
	}
	return durationText(*v)
}

func durationText(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1f 秒", s)
	case s < 3600:
		return fmt.Sprintf("%.1f 分钟", s/60)
	default:
		return fmt.Sprintf("%.1f 小时", s/3600)
	}
}

func priorityText(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// pullBadge is how a task's pull state reads in a list: 未拉取 (never pulled or reset), 已拉取
// (pulled: the lease is within pull_timeout, or the client pushed back / confirmed), 已拉取未推送
// (the lease outlived pull_timeout without a push — what the pull management page lists).
type pullBadge struct{ Label, Class string }

func pullStateOf(t *taskecho.Task, now time.Time) pullBadge {
	switch {
	case t.PulledAt == nil && t.LeaseID == nil:
		return pullBadge{"未拉取", "pull-none"}
	case t.LeaseID != nil && !t.LeaseLive(now):
		return pullBadge{"已拉取未推送", "pull-stale"}
	default:
		return pullBadge{"已拉取", "pull-yes"}
	}
}

// reasonText names why a lease ended, in the page's words.
func reasonText(r *string) string {
	switch derefStr(r) {
	case taskecho.ReleaseClient:
		return "客户端释放/推送"
	case taskecho.ReleaseTimeout:
		return "超时自动释放"
	case taskecho.ReleaseServer:
		return "服务端编辑/重置/删除"
	case taskecho.ReleaseQueueOp:
		return "队列操作"
	case "":
		return ""
	default:
		return *r
	}
}

// i64Text shows an optional count; nil (not known yet) renders as "—".
func i64Text(p *int64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprint(*p)
}
