package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"golang.org/x/sync/errgroup"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/uisession"
	"github.com/taskloom/taskloom/internal/webhook"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// The operations console (/ui/console…) shows the domain of the Temporal-run subsystems on one
// screen, with the operator's action next to it. Counts and lists of executions come from
// Temporal visibility (the TaskloomKind / TaskloomStatus search attributes), never from scanning
// Mongo; a task's own page reads its documents through the domain stores.

// consoleRoutes are the console pages. Actions are POSTs, which requireSession refuses without
// the session's CSRF token or from a read-only account.
func (u *UI) consoleRoutes(g *echo.Group) {
	g.GET("/console", u.overviewPage)
	g.GET("/console/entry", u.entryPage)
	g.POST("/console/entry/:id/resume", u.resumeEntry)
	g.POST("/console/entry/:id/drop", u.dropEntry)
	g.GET("/console/crawl", u.crawlPage)
	g.GET("/console/webhook", u.webhookPage)
	g.POST("/console/webhook/sweeps", u.sweepNow)
	g.GET("/console/pipelines", u.pipelinesPage)
	g.GET("/console/pipelines/redrive", u.bulkRedrivePage)
	g.POST("/console/pipelines/redrive", u.runBulkRedrive)
	g.GET("/console/pipelines/:id", u.pipelineTaskPage)
	g.POST("/console/pipelines/:id/redrive", u.redrivePipeline)
	g.POST("/console/providers/:ref/health", u.pinProvider)
	g.POST("/console/readers", u.addReader)
}

// addReader creates a read-only console account (administrators only, as every POST).
func (u *UI) addReader(c echo.Context) error {
	name, pass := c.FormValue("username"), c.FormValue("password")
	if err := uisession.ValidateCredentials(name, pass); err != nil {
		return back(c, "/ui/console", "error", err.Error()) // written for the person at the form
	}
	_, err := u.users.AddReader(c.Request().Context(), name, pass)
	return u.done(c, "/ui/console", err, "只读账号 "+strings.TrimSpace(name)+" 已创建")
}

// errNoTemporal: a UI built without a Temporal client (tests of the Mongo-only pages).
//
//lint:ignore ST1005 the message starts with the proper noun Temporal and is shown to operators as is
var errNoTemporal = errors.New("Temporal 不可用：控制台的计数与列表来自 Temporal 可见性查询")

// statusQuery matches a TaskloomStatus. Statuses are lower case in visibility; crawl runs that
// finished before that rule carry their capitalised crawl_tasks status, so both spellings count.
func statusQuery(status string) string {
	if l := strings.ToLower(status); l != status {
		return fmt.Sprintf("TaskloomStatus IN ('%s', '%s')", l, status)
	}
	return fmt.Sprintf("TaskloomStatus = '%s'", status)
}

// kindQuery selects one subsystem's executions, narrowed by more conditions.
func kindQuery(kind string, extra ...string) string {
	q := fmt.Sprintf("TaskloomKind = '%s'", kind)
	for _, e := range extra {
		q += " AND " + e
	}
	return q
}

func (u *UI) countWF(ctx context.Context, q string) (int64, error) {
	if u.p.Temporal == nil {
		return 0, errNoTemporal
	}
	resp, err := u.p.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	if err != nil {
		return 0, fmt.Errorf("count workflows (%s): %w", q, err)
	}
	return resp.GetCount(), nil
}

func (u *UI) listWF(ctx context.Context, q string, size int) ([]*workflowpb.WorkflowExecutionInfo, error) {
	if u.p.Temporal == nil {
		return nil, errNoTemporal
	}
	resp, err := u.p.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: int32(size)})
	if err != nil {
		return nil, fmt.Errorf("list workflows (%s): %w", q, err)
	}
	return resp.GetExecutions(), nil
}

// prettyJSON shows a mapped input or output as indented JSON; empty maps show nothing.
func prettyJSON(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}

// temporalLink is the execution's page in the Temporal Web UI.
func (u *UI) temporalLink(workflowID string) string {
	return strings.TrimRight(u.p.Config.Temporal.UIURL, "/") + "/namespaces/" + url.PathEscape(u.p.Config.Temporal.Namespace) +
		"/workflows/" + url.PathEscape(workflowID)
}

// subsystem is one row of the overview: which executions, their statuses, and where to look.
type subsystem struct {
	Name, Kind, Link string
	Statuses         []string
}

var subsystems = []subsystem{
	{Name: "入口（entry）", Kind: entry.Kind, Link: "/ui/console/entry", Statuses: entry.Statuses},
	{Name: "流水线（pipeline）", Kind: pipelinewf.Kind, Link: "/ui/console/pipelines",
		Statuses: []string{pipeline.StatusPending, pipeline.StatusProcessing, pipeline.StatusSuccess, pipeline.StatusFailed}},
	{Name: "爬取（crawl）", Kind: crawlwf.Kind, Link: "/ui/console/crawl", Statuses: []string{crawl.Running, crawl.Completed, crawl.Failed}},
	{Name: "Webhook 投递", Kind: webhook.DeliveryKind, Link: "/ui/console/webhook",
		Statuses: []string{webhook.StatusPending, webhook.StatusSuccess, webhook.StatusFailed, webhook.StatusError}},
}

// Overview bounds: the throughput chart's buckets and the length of each "needs an operator" list.
const (
	throughputBuckets = 6
	throughputStep    = 10 * time.Minute
	attentionRows     = 10
)

type statusCount struct {
	Status string
	N      int64
}

type subsystemView struct {
	subsystem
	Counts   []statusCount
	Total    int64
	LastHour int64
}

// attentionItem is one execution that waits for an operator.
type attentionItem struct {
	ID, Detail, Page, Temporal string
	At                         time.Time
}

type attentionList struct {
	Title, ID string
	Total     int64
	Items     []attentionItem
}

type overviewData struct {
	Subsystems []*subsystemView
	Throughput template.HTML
	Attention  []*attentionList
}

// overviewPage counts every subsystem's executions by status, draws the last hour's finished
// executions, and lists what waits for an operator. A fixed number of visibility calls, run
// concurrently, and one Mongo read (the suspended tasks' reasons).
func (u *UI) overviewPage(c echo.Context) error {
	ctx := c.Request().Context()
	var d overviewData
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	now := time.Now().UTC()
	start := now.Truncate(throughputStep).Add(-(throughputBuckets - 1) * throughputStep)
	buckets := make([][]int, len(subsystems))
	for i, s := range subsystems {
		v := &subsystemView{subsystem: s, Counts: make([]statusCount, len(s.Statuses))}
		d.Subsystems = append(d.Subsystems, v)
		for j, st := range s.Statuses {
			g.Go(func() error {
				n, err := u.countWF(gctx, kindQuery(s.Kind, statusQuery(st)))
				v.Counts[j] = statusCount{Status: st, N: n}
				return err
			})
		}
		buckets[i] = make([]int, throughputBuckets)
		for b := 0; b < throughputBuckets; b++ {
			from, to := start.Add(time.Duration(b)*throughputStep), start.Add(time.Duration(b+1)*throughputStep)
			g.Go(func() error {
				n, err := u.countWF(gctx, kindQuery(s.Kind, fmt.Sprintf("CloseTime >= '%s' AND CloseTime < '%s'",
					from.Format(time.RFC3339), to.Format(time.RFC3339))))
				buckets[i][b] = int(n)
				return err
			})
		}
	}
	lists := u.attentionLists(gctx, g)
	if err := g.Wait(); err != nil {
		return u.failPage(c, err)
	}
	var ss []series
	for i, v := range d.Subsystems {
		for _, n := range v.Counts {
			v.Total += n.N
		}
		for _, n := range buckets[i] {
			v.LastHour += int64(n)
		}
		ss = append(ss, series{Name: v.Name, Class: fmt.Sprintf("s%d", i), Counts: buckets[i]})
	}
	d.Throughput, d.Attention = timelineSVG(start, throughputStep, ss), lists
	return u.render(c, http.StatusOK, "console.html", "运维总览", "console", d)
}

// attentionLists queues the four "needs an operator" lists on g; they are filled when g is done.
// Each goroutine writes fields of its own list only.
func (u *UI) attentionLists(ctx context.Context, g *errgroup.Group) []*attentionList {
	suspended := &attentionList{Title: "挂起的入口任务", ID: "attention-entry"}
	failedPipes := &attentionList{Title: "失败的流水线", ID: "attention-pipelines"}
	crawlFailed := &attentionList{Title: "超过截止时间 / 失败的爬取任务", ID: "attention-crawl"}
	webhookErr := &attentionList{Title: "出错（error）的 Webhook 行", ID: "attention-webhook"}
	g.Go(func() error {
		list, err := u.entry.Suspended(ctx, attentionRows)
		for _, s := range list {
			it := attentionItem{ID: s.TaskID, Detail: fmt.Sprintf("%s · 尝试 %d 次 · %s", s.Channel, s.Attempts, s.Reason),
				Page: "/ui/console/entry#task-" + s.TaskID, Temporal: u.temporalLink(s.TaskID)}
			if s.Since != nil {
				it.At = *s.Since
			}
			suspended.Items = append(suspended.Items, it)
		}
		return err
	})
	g.Go(func() (err error) {
		suspended.Total, err = u.entry.CountSuspended(ctx)
		return err
	})
	for _, l := range []struct {
		list  *attentionList
		query string
		page  func(id string) string
	}{
		{failedPipes, kindQuery(pipelinewf.Kind, "TaskloomStatus = 'failed'"), func(id string) string {
			return "/ui/console/pipelines/" + url.PathEscape(strings.TrimPrefix(id, "pipeline-"))
		}},
		{crawlFailed, kindQuery(crawlwf.Kind, statusQuery(crawl.Failed)), func(string) string {
			return "/ui/console/crawl?status=" + crawl.Failed
		}},
		{webhookErr, kindQuery(webhook.DeliveryKind, fmt.Sprintf("TaskloomStatus = '%s'", webhook.StatusError)), func(string) string {
			return "/ui/console/webhook"
		}},
	} {
		g.Go(func() error {
			execs, err := u.listWF(ctx, l.query, attentionRows)
			for _, e := range execs {
				id := e.GetExecution().GetWorkflowId()
				it := attentionItem{ID: id, Detail: e.GetType().GetName(), Temporal: u.temporalLink(id)}
				if ct := e.GetCloseTime(); ct != nil {
					it.At = ct.AsTime()
				}
				if l.page != nil {
					it.Page = l.page(id)
				}
				l.list.Items = append(l.list.Items, it)
			}
			return err
		})
		g.Go(func() (err error) {
			l.list.Total, err = u.countWF(ctx, l.query)
			return err
		})
	}
	return []*attentionList{suspended, failedPipes, crawlFailed, webhookErr}
}
