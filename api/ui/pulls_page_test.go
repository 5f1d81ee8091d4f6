package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

func TestPullManagementReleaseStatsAndHistory(t *testing.T) {
	env := e2e.New(t)
	project, queue := testenv.Unique("pulls-"), "q1"
	push(t, env, project, queue, submitTask{ID: "c1", Name: "client", Prompt: "p", Status: "pending"})
	for _, id := range []string{"s1", "s2", "s3"} {
		apiCall(t, env, http.MethodPost, "/api/v1/projects/"+project+"/queues/"+queue+"/tasks",
			map[string]any{"taskId": id, "name": "server " + id, "prompt": "p"})
	}
	n, lease := pullQueue(t, env, project, queue)
	if n != 3 || lease == "" {
		t.Fatalf("pulled %d tasks with lease %q", n, lease)
	}
	// The client finishes s3 (a successful pull→confirm for the histogram).
	apiCall(t, env, http.MethodPost, "/api/v1/projects/"+project+"/tasks/s3/pull/confirm", map[string]any{"lease_id": lease})

	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)
	page := "/ui/pulls?project=" + url.QueryEscape(project) + "&timeout=0s"
	b.open(page)
	for sel, want := range map[string]string{"#success-rate": "100%", "#pending tbody": "s1"} {
		if got := b.text(sel); !strings.Contains(got, want) {
			t.Fatalf("%s = %q, want %q", sel, got, want)
		}
	}
	if got := b.text("#pending tbody"); strings.Contains(got, "s3") {
		t.Fatalf("confirmed task listed as pending: %q", got)
	}
	svg := get(b, "read charts", chromedp.OuterHTML(chromedp.CSS("#pull-timeline")))
	if !strings.Contains(svg, `class="pulls"`) || !strings.Contains(svg, "拉取: 3") {
		t.Fatalf("timeline lacks the 3 pulls: %s", svg)
	}
	if hist := get(b, "read histogram", chromedp.OuterHTML(chromedp.CSS("#pull-durations"))); !strings.Contains(hist, "&lt;1分: 1") {
		t.Fatalf("histogram lacks the confirmed pull: %s", hist)
	}
	b.snap("pulls-before-release")

	// Release s1 and s2 from the page: they leave the list and become pullable again.
	b.run("select pending", chromedp.Click(chromedp.CSS(`#pending tr[data-task="s1"] input`)),
		chromedp.Click(chromedp.CSS(`#pending tr[data-task="s2"] input`)))
	b.submit("#release-submit", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已释放 2 个") {
		t.Fatalf("release says %q", got)
	}
	if got := b.text("#pending tbody"); strings.Contains(got, "s1") || strings.Contains(got, "s2") {
		t.Fatalf("released tasks still pending: %q", got)
	}
	if n, _ := pullQueue(t, env, project, queue); n != 2 {
		t.Fatalf("after release %d tasks are pullable, want 2", n)
	}

	// History lookup by task id.
	b.fill(map[string]string{"#lookup-task": "s1"})
	b.submit("#lookup-submit", "#lookup-history")
	if got := b.text("#lookup-history tbody"); !strings.Contains(got, "客户端释放") || !strings.Contains(got, "进行中") {
		t.Fatalf("s1 history = %q", got)
	}
	b.snap("pulls-history")
}
