package crawl

import (
	"context"

	"go.temporal.io/sdk/workflow"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
)

// versionPrefixedNames: the workflow schedules its activities by their
// Crawl-prefixed names (CrawlMarkRunning, …), unique across subsystems.
// Runs started before keep scheduling the bare names (MarkRunning, …) their
// histories recorded, which legacyActivities keeps registered.
const versionPrefixedNames = "crawl-prefixed-activity-names"

// activityFuncs are the activities one run schedules, as method values on a
// nil receiver: they only name the activity and type its arguments.
type activityFuncs struct {
	markRunning  func(context.Context, crawlact.MarkRunningInput) error
	runCrawler   func(context.Context, int64) (crawlact.CrawlerOutcome, error)
	failProgress func(context.Context, int64) (crawl.Progress, error)
	finish       func(context.Context, crawlact.FinishInput) error
}

// activitiesFor picks the names of a run's versionPrefixedNames version.
func activitiesFor(v workflow.Version) activityFuncs {
	if v == workflow.DefaultVersion {
		var l *legacyActivities
		return activityFuncs{markRunning: l.MarkRunning, runCrawler: l.RunCrawler, failProgress: l.FailProgress, finish: l.Finish}
	}
	var a *crawlact.Activities
	return activityFuncs{markRunning: a.CrawlMarkRunning, runCrawler: a.CrawlRunCrawler,
		failProgress: a.CrawlFailProgress, finish: a.CrawlFinish}
}

// legacyActivities registers the bare activity names that crawls started
// before versionPrefixedNames still schedule, each doing what its prefixed
// successor does. It is a struct of its own, registered beside
// crawlact.Activities, so the old names stay out of the activities' own
// API. Delete it, with the DefaultVersion branches, once every crawl
// started before the change has finished (docs/crawl.md).
type legacyActivities struct{ acts *crawlact.Activities }

func (l *legacyActivities) MarkRunning(ctx context.Context, in crawlact.MarkRunningInput) error {
	return l.acts.CrawlMarkRunning(ctx, in)
}

func (l *legacyActivities) RunCrawler(ctx context.Context, originalTaskID int64) (crawlact.CrawlerOutcome, error) {
	return l.acts.CrawlRunCrawler(ctx, originalTaskID)
}

func (l *legacyActivities) FailProgress(ctx context.Context, originalTaskID int64) (crawl.Progress, error) {
	return l.acts.CrawlFailProgress(ctx, originalTaskID)
}

// ReadProgress is the deadline read of the runs that predate
// versionFailProgress; no newer run schedules it, so it has no prefixed
// successor and reads the hash itself.
func (l *legacyActivities) ReadProgress(ctx context.Context, originalTaskID int64) (crawl.Progress, error) {
	return l.acts.Progress.Get(ctx, originalTaskID)
}

func (l *legacyActivities) Finish(ctx context.Context, in crawlact.FinishInput) error {
	return l.acts.CrawlFinish(ctx, in)
}
