package crawl

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	crawlact "github.com/taskloom/taskloom/activities/crawl"
	"github.com/taskloom/taskloom/internal/crawl"
)

// memStores stand in for crawl_tasks and the task_progress hash, so the
// activities Register wires run for real in the test environment.
type memStores struct {
	finished *crawl.Finish
	progress crawl.Progress
}

func (m *memStores) MarkRunning(context.Context, int64, string, string, string, time.Time) error {
	return nil
}

func (m *memStores) SaveCrawler(context.Context, int64, crawl.CrawlerRecord, time.Time) error {
	return nil
}

func (m *memStores) Finish(_ context.Context, _ int64, f crawl.Finish, _ time.Time) error {
	m.finished = &f
	return nil
}

func (m *memStores) Get(context.Context, int64) (crawl.Progress, error) { return m.progress, nil }

func (m *memStores) Fail(context.Context, int64) (crawl.Progress, error) {
	m.progress.Status = crawl.ProgressFailed
	return m.progress, nil
}

// A new run schedules the Crawl-prefixed names; a run started before
// versionPrefixedNames (its history has no marker, so GetVersion answers
// DefaultVersion) schedules the bare names, which Register keeps and which do
// the same work. The recorded histories replay through the bare names in
// TestReplayRecordedHistories.
func TestActivityNamesByVersion(t *testing.T) {
	cases := []struct {
		name             string
		prefixed, failed workflow.Version
		source           string
		want             []string
	}{
		{"new run, deadline", 1, 1, crawl.SourceKafka, []string{"CrawlMarkRunning", "CrawlFailProgress", "CrawlFinish"}},
		{"new run, crawler", 1, 1, crawl.SourceAPI, []string{"CrawlMarkRunning", "CrawlRunCrawler", "CrawlFinish"}},
		{"old run, deadline", workflow.DefaultVersion, 1, crawl.SourceKafka, []string{"MarkRunning", "FailProgress", "Finish"}},
		{"old run, crawler", workflow.DefaultVersion, 1, crawl.SourceAPI, []string{"MarkRunning", "RunCrawler", "Finish"}},
		{"run before fail-progress", workflow.DefaultVersion, workflow.DefaultVersion, crawl.SourceKafka,
			[]string{"MarkRunning", "ReadProgress", "Finish"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			e := s.NewTestWorkflowEnvironment()
			st := &memStores{progress: crawl.Progress{TotalTweets: 3, ProcessedTweets: 1, Status: crawl.ProgressProcessing}}
			// No CrawlerCommand: the crawler activity fails at once, without running anything.
			Register(e, &crawlact.Activities{Tasks: st, Progress: st})
			e.OnGetVersion(versionPrefixedNames, workflow.DefaultVersion, 1).Return(c.prefixed)
			e.OnGetVersion(versionFailProgress, workflow.DefaultVersion, 1).Return(c.failed)
			var names []string
			e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				names = append(names, info.ActivityType.Name)
			})
			e.ExecuteWorkflow(CrawlTaskWorkflow, Input{OriginalTaskID: 21, Source: c.source,
				CrawlerTimeout: time.Hour, CompletionDeadline: testDeadline})
			if err := e.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names, c.want) {
				t.Fatalf("scheduled %v, want %v", names, c.want)
			}
			if st.finished == nil || st.finished.Status != crawl.Failed {
				t.Fatalf("finish = %+v", st.finished)
			}
		})
	}
}
