package crawl

import (
	sdkworker "go.temporal.io/sdk/worker"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
)

// Register registers CrawlTaskWorkflow and its activities on w: the Crawl-prefixed methods of
// acts, and the bare names that runs started before versionPrefixedNames schedule
// (legacyActivities).
func Register(w sdkworker.Registry, acts *crawlact.Activities) {
	w.RegisterWorkflow(CrawlTaskWorkflow)
	w.RegisterActivity(acts)
	w.RegisterActivity(&legacyActivities{acts: acts})
}
