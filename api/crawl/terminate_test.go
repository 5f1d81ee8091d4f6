package crawl_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

// A crawl task whose workflow is terminated from outside (`temporal workflow terminate
// --workflow-id crawl-<id>`) answers Terminated, with who and why, within seconds — not Running
// for ever.
func TestTerminatedWorkflowShowsTerminated(t *testing.T) {
	release := filepath.Join(t.TempDir(), "never")
	e := newCrawlEnv(t, fakeCrawler("--tweets 5 --hold-until "+release))
	id := taskID()
	e.create(t, id)
	e2e.Eventually(t, 60*time.Second, "the task running", func() bool {
		status, v := e.get(t, id)
		return status == http.StatusOK && v.Status == crawl.Running
	})
	if err := e.Platform.Temporal.TerminateWorkflow(e.Context(), crawlwf.WorkflowID(id), "", "operator: stuck crawler"); err != nil {
		t.Fatal(err)
	}
	var v task
	e2e.Eventually(t, 10*time.Second, "the task terminated", func() bool {
		_, v = e.get(t, id)
		return v.Status == crawl.Terminated
	})
	if !strings.HasPrefix(v.FailureReason, "workflow terminated by ") || !strings.HasSuffix(v.FailureReason, ": operator: stuck crawler") ||
		v.FinishedAt == nil {
		t.Fatalf("terminated task: %+v", v)
	}
}
