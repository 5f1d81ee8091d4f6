package ui

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/waiting"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

const crawlTasksPerPage = 50

var crawlStatuses = []string{crawl.Running, crawl.Completed, crawl.Failed}

type crawlRow struct {
	crawl.TaskRecord
	// Live is the Redis progress of a running task (nil for finished ones, whose record holds
	// the final counts).
	Live     *crawl.Progress
	Temporal string
	// Waiting is what a running task waits for (crawl.WaitingFor).
	Waiting *waiting.For
}

// Duplicates is the copies of counted tweets: live while running, final once finished.
func (r crawlRow) Duplicates() int64 {
	if r.Live != nil {
		return r.Live.DuplicateTweets
	}
	return r.DuplicateTweets
}

// DeadLettered is the dead-lettered records naming the task: live while running, final once
// finished.
func (r crawlRow) DeadLettered() int64 {
	if r.Live != nil {
		return r.Live.DeadLetteredRecords
	}
	return r.DeadLetteredRecords
}

type crawlData struct {
	Status   string
	Statuses []string
	Tasks    []crawlRow
	Pager    pager
}

// crawlPage lists crawl tasks (one page, one count) with their progress: processed / total,
// duplicates and dead-lettered records from the live Redis counters while running (one read
// per running task on the page) and from the final record once finished, with missing tweets,
// the failure reason and the crawler's exit code and last lines.
func (u *UI) crawlPage(c echo.Context) error {
	ctx := c.Request().Context()
	d := crawlData{Status: strings.TrimSpace(c.QueryParam("status")), Statuses: crawlStatuses}
	pg := pageOf(c, crawlTasksPerPage)
	ts, total, err := crawldb.New(u.p.Mongo).List(ctx, d.Status, pg.skip(), int64(pg.Size))
	if err != nil {
		return u.failPage(c, err)
	}
	d.Pager = pg.with(total, c)
	var live *countscript.Store
	if u.p.Redis != nil {
		live = countscript.FromPlatform(u.p)
	}
	for _, t := range ts {
		r := crawlRow{TaskRecord: t, Temporal: u.temporalLink(crawlwf.WorkflowID(t.OriginalTaskID))}
		if t.WorkflowID != "" {
			r.Temporal = u.temporalLink(t.WorkflowID)
		}
		if t.Status == crawl.Running && live != nil {
			if p, err := live.Get(ctx, t.OriginalTaskID); err == nil {
				r.Live = &p
			}
		}
		r.Waiting = crawl.WaitingFor(t, r.Live)
		d.Tasks = append(d.Tasks, r)
	}
	return u.render(c, http.StatusOK, "console_crawl.html", "爬取任务", "crawl", d)
}
