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

func TestTaskDetailReRunMoveDeleteAndFilters(t *testing.T) {
	env := e2e.New(t)
	project := testenv.Unique("detail-")
	push(t, env, project, "q1", submitTask{ID: "e1", Name: "failing", Prompt: "p", Status: "error"})
	push(t, env, project, "q2", submitTask{ID: "x", Name: "other", Prompt: "p", Status: "done"})
	other := testenv.Unique("other-")
	push(t, env, other, "q", submitTask{ID: "y", Name: "y", Prompt: "p", Status: "done"})
	apiCall(t, env, http.MethodPut, "/api/v1/projects/"+project+"/metadata", map[string]any{"tags": []string{"nightly"}})

	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)

	// Home: the tag filter keeps the tagged project only.
	b.open("/ui/?tag=nightly")
	b.snap("home-tag-filter")
	if got := b.text("#projects tbody"); !strings.Contains(got, project) || strings.Contains(got, other) {
		t.Fatalf("tag filter shows %q", got)
	}

	projectPath := "/ui/projects/" + url.PathEscape(project)
	b.open(projectPath + "/tasks/e1?queue=q1")
	if got := b.text("#task-source"); got != "客户端" {
		t.Fatalf("source = %q", got)
	}
	b.submit("#re-run", "#flash")
	if got := b.text("#task-status"); got != "pending" {
		t.Fatalf("after re-run status = %q (flash %q)", got, b.text("#flash"))
	}
	b.run("choose q2", chromedp.SetValue(chromedp.CSS("#move-to"), "q2"))
	b.submit("#move-submit", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "q2") || !strings.Contains(b.path(), "queue=q2") {
		t.Fatalf("move says %q, now at %s", got, b.path())
	}
	b.run("choose project level", chromedp.SetValue(chromedp.CSS("#move-to"), ""))
	b.submit("#move-submit", "#flash")
	if got := b.text("#task-facts"); !strings.Contains(got, "项目级") {
		t.Fatalf("after moving to project level: %q", got)
	}

	// Project page filters by pull state: the never-pulled task is under 未拉取 only.
	b.open(projectPath + "?pulled=not_pulled")
	b.snap("project-not-pulled")
	if got := b.text("#tasks tbody"); !strings.Contains(got, "e1") {
		t.Fatalf("not-pulled filter: %q", got)
	}
	b.open(projectPath + "?pulled=pulled")
	if got := b.text("#tasks tbody"); strings.Contains(got, "e1") {
		t.Fatalf("pulled filter lists a never-pulled task: %q", got)
	}

	// Soft delete from the detail page (its confirm dialog is accepted).
	b.open(projectPath + "/tasks/e1")
	b.submit("#delete-task", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已删除") || b.path() != projectPath {
		t.Fatalf("delete says %q, now at %s", got, b.path())
	}
	if r := env.Do(http.MethodGet, "/api/v1/projects/"+project+"/tasks/e1", env.AdminKey, nil); r.Status != http.StatusNotFound {
		t.Fatalf("deleted task over the API: %d %s", r.Status, r.Body)
	}
	// The page of a missing thing says so in plain words.
	b.open(projectPath + "/tasks/no-such-task")
	if got := b.text("#error-text"); !strings.Contains(got, "任务不存在") {
		t.Fatalf("missing task page says %q", got)
	}
}
