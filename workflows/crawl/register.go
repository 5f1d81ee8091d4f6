package crawl

import (
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
)

// Register registers CrawlTaskWorkflow and the Crawl-prefixed activities of a on w. Under Worker
// Versioning a crawl task, which waits up to its completion deadline, moves to the current build
// (AutoUpgrade: a future change to it is a GetVersion with its removal condition beside it).
func Register(w sdkworker.Registry, a *crawlact.Activities) {
	w.RegisterWorkflowWithOptions(CrawlTaskWorkflow, workflow.RegisterOptions{VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
	w.RegisterActivity(a)
}
