package crawl

import (
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

// WaitingFor is what a running task waits for, from its crawl_tasks record and its live
// task_progress counters (nil when unread): the crawler while a task started through taskloom has
// no crawler record yet, its missing tweets after. The completion deadline is the workflow's (GET
// /api/v1/crawl-tasks/{id} asks it); this answer, for lists, has no Until. nil once finished.
func WaitingFor(t TaskRecord, live *Progress) *waiting.For {
	if t.Finished() {
		return nil
	}
	if t.Source == SourceAPI && t.Crawler == nil {
		return waiting.New(waiting.Crawler, "the crawler runs", t.CreatedAt, time.Time{})
	}
	since := t.CreatedAt
	if t.Crawler != nil {
		since = t.Crawler.FinishedAt
	}
	processed, total := t.ProcessedTweets, "?"
	if live != nil {
		processed = live.ProcessedTweets
		if live.TotalTweets >= 0 {
			total = fmt.Sprint(live.TotalTweets)
		}
	} else if t.TotalTweets != nil {
		total = fmt.Sprint(*t.TotalTweets)
	}
	return waiting.New(waiting.TweetsMissing, fmt.Sprintf("%d / %s distinct tweets processed", processed, total), since, time.Time{})
}
