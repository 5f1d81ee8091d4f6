package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/taskloom/taskloom/internal/testenv"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// TestTemporalWebUIShowsSummaries opens the dev server's own Web UI, as an operator would, on a
// pipeline run by the API: the workflow list finds the execution (the UI's list has no summary
// column: visibility does not hold user metadata), and its page shows the static summary, the
// static details and the current details.
func TestTemporalWebUIShowsSummaries(t *testing.T) {
	f := newConsoleFixture(t)
	r := apiCall(t, f.env, http.MethodPost, "/api/v1/pipeline-tasks", map[string]any{
		"pipeline": f.pipeline, "user_id": "entry", "feature_id": "entry", "input_data": map[string]any{"user_text": "hi"}})
	id, _ := r.Map(t)["task_id"].(string)
	if r.Status != http.StatusCreated || id == "" {
		t.Fatalf("start pipeline: %d %s", r.Status, r.Body)
	}
	wfID := pipelinewf.WorkflowID(id)
	summary := f.env.Explain(wfID).Summary
	if !strings.Contains(summary, "pipeline "+f.pipeline+"@latest") {
		t.Fatalf("static summary = %q", summary)
	}

	ns := url.PathEscape(f.env.Config.Temporal.Namespace)
	b := newBrowser(t, testenv.TemporalUI(t))
	list := "/namespaces/" + ns + "/workflows?query=" + url.QueryEscape(`WorkflowId="`+wfID+`"`)
	b.waitForText(list, wfID)
	b.shot("temporal-ui-workflows")
	// The execution's page: the summary on its start event, the activity summaries on the
	// timeline, the static and current details under its "User Metadata" tab.
	b.waitForText("/namespaces/"+ns+"/workflows/"+url.PathEscape(wfID), summary)
	b.waitForText("", "call "+f.provider+" for step 1 reply")
	b.shot("temporal-ui-pipeline")
	if !get(b, "open the User Metadata tab", chromedp.Evaluate[bool](`(() => {
		const tab = [...document.querySelectorAll("a, button")].find(e => e.textContent.trim() === "User Metadata");
		if (tab) tab.click();
		return !!tab;
	})()`)) {
		t.Fatal("the execution's page has no User Metadata tab")
	}
	b.waitForText("", "/ui/console/pipelines/"+id)
	b.waitForText("", "success: 1 steps done")
	b.shot("temporal-ui-pipeline-metadata")
}

// pageText is the page's text and that of its frames: the Web UI renders markdown (the details)
// in sandboxed iframes, whose source is their srcdoc.
const pageText = `[document.body.innerText, ...[...document.querySelectorAll("iframe")].map(f => {
	try { return f.contentDocument.body.innerText; } catch (e) { return f.srcdoc || ""; }
})].join("\n")`

// waitForText opens path (none: stays on the page) and waits until the page's text contains
// want: the Web UI renders in the browser after its own API calls.
func (b *browser) waitForText(path, want string) {
	b.t.Helper()
	if path != "" {
		b.open(path)
	}
	deadline := time.Now().Add(45 * time.Second)
	for {
		body := get(b, "read the page", chromedp.Evaluate[string](pageText))
		if strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never showed %q; it shows:\n%s", b.location(), want, body)
		}
		time.Sleep(time.Second)
	}
}
