package ui_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// row is the CSS selector of a task's row in a task table.
func row(taskID, cell string) string {
	return `#tasks tr[data-task="` + taskID + `"] ` + cell
}

func TestServerTasksPullStateAndQueueOperations(t *testing.T) {
	env := e2e.New(t)
	project, queue := testenv.Unique("proj-"), "flow/tasks.json" // a queue id with "/" as real clients send
	push(t, env, project, queue,
		submitTask{ID: "c-err", Name: "client failed", Prompt: "p", Status: "error"},
		submitTask{ID: "c-ok", Name: "client done", Prompt: "p", Status: "done"})
	b := newBrowser(t, env.API.URL)
	b.initAndLogin(adminUser, adminPass)

	// Home: the project is listed with its counts, and the search finds it.
	b.open("/ui/?q=" + url.QueryEscape(project))
	if got := b.text(`#projects tr[data-project="` + project + `"]`); !strings.Contains(got, "错误 1") || !strings.Contains(got, "完成 1") {
		t.Fatalf("home row = %q", got)
	}
	projectPath := "/ui/projects/" + url.PathEscape(project)
	queuePath := projectPath + "/queues/" + url.PathEscape(queue)

	// Project detail: a project-level server task, then added to the queue.
	b.open(projectPath)
	b.fill(map[string]string{"#new-task-id": "pt-1", "#new-task-name": "project task", "#new-task-prompt": "do it", "#new-task-priority": "high"})
	b.submit("#new-task-submit", "#flash")
	if got := b.text(row("pt-1", ".pull-state")); got != "未拉取" {
		t.Fatalf("new project task pull state = %q", got)
	}
	b.fill(map[string]string{row("pt-1", ".to-queue"): queue})
	b.submit(row("pt-1", "form button"), "#task-facts")
	if got := b.text("#flash"); !strings.Contains(got, queue) {
		t.Fatalf("add to queue says %q", got)
	}

	// Queue detail: a server task created in the queue.
	b.open(queuePath)
	b.fill(map[string]string{"#new-task-id": "qt-1", "#new-task-name": "queue task", "#new-task-prompt": "work"})
	b.submit("#new-task-submit", "#flash")
	if got := b.text(row("qt-1", "")); !strings.Contains(got, "服务端") || !strings.Contains(got, "未拉取") {
		t.Fatalf("queue task row = %q", got)
	}
	b.snap("queue-before-pull")

	// A client pulls through the JSON API; the page shows 已拉取.
	if n, _ := pullQueue(t, env, project, queue); n != 2 {
		t.Fatalf("pulled %d tasks, want the 2 server tasks", n)
	}
	b.eventuallyText(queuePath, row("qt-1", ".pull-state"), "已拉取")
	b.snap("queue-after-pull")

	// Editing the pulled task clears its pull state and records why in the history.
	b.open(queuePath)
	b.submit(row("qt-1", "a"), "#edit-task")
	b.fill(map[string]string{"#edit-name": "queue task (edited)", "#edit-tags": "a, b"})
	b.submit("#edit-save", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "拉取状态已重置") {
		t.Fatalf("edit says %q", got)
	}
	if got := b.text("#task-pull"); got != "未拉取" {
		t.Fatalf("after edit pull state = %q", got)
	}
	if got := b.text("#pull-history tbody"); !strings.Contains(got, "服务端编辑") {
		t.Fatalf("pull history = %q", got)
	}
	b.snap("task-after-edit")

	// reset-error: the confirmation names the count, and the error task comes back as pending.
	b.open(queuePath)
	b.submit("#op-reset-error", "#confirm-count")
	if got := b.text("#confirm-count"); got != "1" {
		t.Fatalf("reset-error would touch %q tasks, want 1", got)
	}
	b.snap("confirm-reset-error")
	b.submit("#confirm-run", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "reset-error 完成：1") {
		t.Fatalf("reset-error says %q", got)
	}
	if got := b.text(row("c-err", ".task-status")); got != "pending" {
		t.Fatalf("error task after reset-error is %q", got)
	}

	// Batch: reset the pull state of the still pulled task, then delete two tasks.
	b.run("select tasks", chromedp.Click(chromedp.CSS(row("pt-1", `input[name=task_ids]`))),
		chromedp.SetValue(chromedp.CSS("#batch-action"), "reset-pull"))
	b.submit("#batch-submit", "#flash")
	if got := b.text(row("pt-1", ".pull-state")); got != "未拉取" {
		t.Fatalf("after batch reset-pull: %q (flash %q)", got, b.text("#flash"))
	}
	b.run("select tasks", chromedp.Click(chromedp.CSS(row("pt-1", `input[name=task_ids]`))),
		chromedp.Click(chromedp.CSS(row("c-ok", `input[name=task_ids]`))),
		chromedp.SetValue(chromedp.CSS("#batch-action"), "delete"))
	b.submit("#batch-submit", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已删除 2 个任务") {
		t.Fatalf("batch delete says %q", got)
	}
	html := get(b, "read queue page", chromedp.OuterHTML(chromedp.CSS("#tasks")))
	if strings.Contains(html, `data-task="pt-1"`) || strings.Contains(html, `data-task="c-ok"`) {
		t.Fatal("deleted tasks still listed")
	}
}
