package ui_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// TestConsolePages drives the operations console over data made by real workflows: entry tasks
// applied through the API run their pipeline against a failing vendor until they are suspended
// (each attempt a failed pipeline task), then are resumed and dropped from the entry page; the
// pipelines page shows the failed tasks' steps and ledger and pins the provider. A read-only
// account sees no action and is refused one; a forged post (no CSRF token) is refused. A crawl
// task whose tweets, a copy and a poison record went through the real consumer fails at its
// deadline and shows their counts.
func TestConsolePages(t *testing.T) {
	f := newConsoleFixture(t)
	crawlID := time.Now().UnixNano() % 1_000_000_000
	f.crawlRecords(crawlID)
	apiCall(t, f.env, http.MethodPost, "/api/v1/crawl-tasks", map[string]any{"original_task_id": crawlID})
	f.vendor.fail.Store(true)
	resumeID, dropID := f.apply("chat-resume", "resume me"), f.apply("chat-drop", "drop me")
	f.waitEntry(resumeID, "suspended")
	f.waitEntry(dropID, "suspended")

	b := newBrowser(t, f.env.API.URL)
	b.initAndLogin(adminUser, adminPass)

	// Overview: visibility counts both suspended tasks; they and the failed pipelines are listed.
	b.eventuallyText("/ui/console", `#subsystems tr[data-kind="entry"] [data-status="suspended"]`, "suspended 2")
	if got := b.text("#attention-entry"); !strings.Contains(got, resumeID) || !strings.Contains(got, dropID) {
		t.Fatalf("needs-an-operator entry list = %q", got)
	}
	b.eventuallyText("/ui/console", "#attention-pipelines .total", "4")
	b.shot("console-overview")

	// Entry page: reason and attempts, then resume one (with a reason) and drop the other.
	b.open("/ui/console/entry")
	if got := b.text(`#suspended tr[data-task="` + resumeID + `"] .attempts`); got != "2" {
		t.Fatalf("attempts shown = %q", got)
	}
	if got := b.text(`#suspended tr[data-task="` + resumeID + `"] .reason`); !strings.Contains(got, "auto_drop") ||
		!strings.Contains(got, "suspended after 2 attempts") || !strings.Contains(got, "dropped automatically unless resumed") {
		t.Fatalf("suspension reason and waiting_for shown: %q", got)
	}
	b.shot("console-entry")
	f.vendor.fail.Store(false)
	b.fill(map[string]string{`#suspended tr[data-task="` + resumeID + `"] .resume-reason`: "vendor fixed"})
	b.submit(`#suspended tr[data-task="`+resumeID+`"] button.resume`, "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已恢复") {
		t.Fatalf("resume says %q", got)
	}
	f.waitEntry(resumeID, "completed")
	b.open("/ui/console/entry")
	b.submit(`#suspended tr[data-task="`+dropID+`"] button.drop`, "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "已放弃") {
		t.Fatalf("drop says %q", got)
	}
	f.waitEntry(dropID, "dropped")
	// Neither task waits for an operator any more, so the page no longer lists them.
	e2e.Eventually(t, 10*time.Second, "resumed and dropped tasks to leave the suspended list", func() bool {
		b.open("/ui/console/entry")
		h := get(b, "read suspended list", chromedp.OuterHTML(chromedp.CSS("#suspended")))
		return !strings.Contains(h, resumeID) && !strings.Contains(h, dropID)
	})

	// Pipelines: failed tasks of the pipeline, one task's steps and the account's ledger.
	b.open("/ui/console/pipelines?status=failed&pipeline=" + url.QueryEscape(f.pipeline))
	if got := b.text("#pipeline-tasks tbody"); strings.Count(got, "failed") < 4 {
		t.Fatalf("failed pipeline tasks listed: %q", got)
	}
	b.shot("console-pipelines")
	b.submit("#pipeline-tasks tbody tr:first-child a", "#steps")
	if got := b.text("#steps tbody"); !strings.Contains(got, f.provider) || !strings.Contains(got, "failed") {
		t.Fatalf("step timeline = %q", got)
	}
	if got := b.text("#quota"); !strings.Contains(got, "消耗") {
		t.Fatalf("quota = %q", got)
	}
	b.shot("console-pipeline-task")

	// Crawl: the task failed at its deadline, with the crawler's exit code and output, and the
	// final counts the workflow read from Redis: one tweet, its copy, one dead letter.
	crawlRow := `#crawl-tasks tr[data-task="` + strconv.FormatInt(crawlID, 10) + `"]`
	b.eventuallyText("/ui/console/crawl?status=Failed", crawlRow+" .task-status", "Failed")
	if got := b.text(crawlRow); !strings.Contains(got, "crawling") || !strings.Contains(got, "退出码 0") {
		t.Fatalf("crawl row = %q", got)
	}
	cells := map[string]string{".progress": "1 / —", ".duplicates": "1", ".dead-lettered": "1"}
	for sel, want := range cells {
		if got := strings.TrimSpace(b.text(crawlRow + " " + sel)); got != want {
			t.Errorf("crawl row %s = %q, want %q", sel, got, want)
		}
	}
	b.shot("console-crawl")
	b.eventuallyText("/ui/console", "#attention-crawl", strconv.FormatInt(crawlID, 10))

	// Webhook: no Feishu tables in this env, so no deliveries, and "sweep now" says why not.
	b.open("/ui/console/webhook")
	b.submit("#sweep-submit", "#flash")
	if got := b.text("#flash"); !strings.Contains(got, "未配置") {
		t.Fatalf("sweep without Feishu says %q", got)
	}
	b.shot("console-webhook")

	// Provider pin down, then back to auto.
	b.open("/ui/console/pipelines")
	b.submit(`#providers tr[data-provider="`+f.provider+`"] button.pin-down`, "#flash")
	if got := b.text(`#providers tr[data-provider="` + f.provider + `"]`); !strings.Contains(got, "down") || !strings.Contains(got, "已固定") {
		t.Fatalf("after pin down: %q", got)
	}
	b.submit(`#providers tr[data-provider="`+f.provider+`"] button.pin-auto`, "#flash")
	if got := b.text(`#providers tr[data-provider="` + f.provider + `"]`); strings.Contains(got, "已固定") {
		t.Fatalf("after auto: %q", got)
	}

	// A reader (added through the overview's form) sees the pages without any action.
	b.open("/ui/console")
	b.fill(map[string]string{"#reader-username": "viewer", "#reader-password": "viewer password"})
	b.submit("#reader-submit", "#flash")
	usr, err := uisession.NewUsers(f.env.Platform.Mongo).Authenticate(f.env.Context(), "viewer", "viewer password")
	if err != nil || usr.Role != uisession.RoleRead {
		t.Fatalf("reader account: %+v %v", usr, err)
	}
	readerTok, readerCSRF := sessionFor(t, f.env, usr)
	for _, path := range []string{"/ui/console", "/ui/console/entry", "/ui/console/pipelines", "/ui/console/webhook"} {
		resp := getPage(t, f.env.API.URL, path, readerTok)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `method="post" action="/ui/console`) {
			t.Fatalf("reader view of %s: %d, has action forms: %v", path, resp.StatusCode, strings.Contains(string(body), `action="/ui/console`))
		}
	}

	// A third suspended task: neither the reader (valid CSRF) nor a forged admin post moves it.
	f.vendor.fail.Store(true)
	held := f.apply("chat-held", "stays suspended")
	f.waitEntry(held, "suspended")
	if r := postForm(t, f.env.API.URL, "/ui/console/entry/"+held+"/resume", readerTok, url.Values{"csrf_token": {readerCSRF}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("reader resume: %d", r.StatusCode)
	}
	adminTok := b.sessionCookie()
	if r := postForm(t, f.env.API.URL, "/ui/console/entry/"+held+"/drop", adminTok, url.Values{"csrf_token": {"forged"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("forged drop: %d", r.StatusCode)
	}
	if r := postForm(t, f.env.API.URL, "/ui/console/providers/"+f.provider+"/health", adminTok, url.Values{"status": {"down"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("pin without a token: %d", r.StatusCode)
	}
	if st := f.entryStatus(held); st != "suspended" {
		t.Fatalf("refused posts changed the task to %s", st)
	}
}
