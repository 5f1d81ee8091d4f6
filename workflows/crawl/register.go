package crawl

import (
	sdkworker "go.temporal.io/sdk/worker"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
)

// Register registers CrawlTaskWorkflow and the Crawl-prefixed activities of a on w.
func Register(w sdkworker.Registry, a *crawlact.Activities) {
	w.RegisterWorkflow(CrawlTaskWorkflow)
	w.RegisterActivity(a)
}
