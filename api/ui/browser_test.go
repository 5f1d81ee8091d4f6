package ui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// actionTimeout bounds one browser step. Pages answer in milliseconds, but a sign-in hashes with
// bcrypt, which takes seconds under -race on a busy 2-core machine.
const actionTimeout = 60 * time.Second

// browser drives one headless Chromium against base (the e2e API server).
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// newBrowser starts Chromium with a fresh profile. Without Chromium the test is skipped, except
// in CI (CI=true), where a missing browser must fail the build rather than hide the UI tests.
// On failure a screenshot of the current page is saved in the test's temp dir (and copied to
// $TASKLOOM_UI_SCREENSHOTS when set, because the temp dir is removed after the test).
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		if p, lerr := exec.LookPath("chromium"); lerr == nil {
			path = p
		} else if os.Getenv("CI") == "true" {
			t.Fatalf("chromium not found at %s or on PATH; CI must run the browser tests (apt-get install chromium)", chromiumPath)
		} else {
			t.Skipf("chromium not found at %s or on PATH: skipping browser test (install it with apt-get install chromium)", chromiumPath)
		}
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancelAlloc)
	t.Cleanup(cancel)
	b := &browser{t: t, ctx: ctx, base: strings.TrimRight(base, "/")}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// Accept window.confirm dialogs (data-confirm forms) the way a user clicking OK would. The
	// dialog blocks the click that opened it, so another goroutine must answer it.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	t.Cleanup(b.screenshotOnFailure)
	return b
}

func (b *browser) screenshotOnFailure() {
	if !b.t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("failure screenshot: %v", err)
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name()) + ".png"
	path := filepath.Join(b.t.TempDir(), name)
	if err := os.WriteFile(path, png, 0o644); err == nil {
		b.t.Logf("failure screenshot: %s", path)
	}
	if dir := os.Getenv("TASKLOOM_UI_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
}

// snap saves a 1280×900 screenshot of the current page into $TASKLOOM_UI_SCREENSHOTS when it
// is set (`make screenshots`), so a person can look at the pages a test walked through.
func (b *browser) snap(name string) { b.shot(name) }

// run performs actions within actionTimeout, failing the test with what was being done.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	get(b, what, chromedp.Steps(actions...))
}

// get runs one action that returns a value, failing the test with what was being done.
func get[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v (page: %s)", what, err, b.location())
	}
	return v
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// open loads a UI path and waits for the page body.
func (b *browser) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// path is the current URL's path and query.
func (b *browser) path() string {
	return strings.TrimPrefix(b.location(), b.base)
}

// fill sets form fields by CSS selector.
func (b *browser) fill(fields map[string]string) {
	b.t.Helper()
	var acts []chromedp.Action[chromedp.Void]
	for sel, v := range fields {
		acts = append(acts, chromedp.SetValue(chromedp.CSS(sel), v))
	}
	b.run("fill form", acts...)
}

// submit clicks sel and waits for the next page to show waitFor. The current page is marked
// first, so an element of the same id on the page being left never counts as arrived.
func (b *browser) submit(sel, waitFor string) {
	b.t.Helper()
	get(b, "mark the current page", chromedp.Evaluate[bool](`document.body.setAttribute("data-left", "1") === undefined`))
	b.run(fmt.Sprintf("click %s, wait for %s", sel, waitFor),
		chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("body:not([data-left]) "+waitFor)))
}

// text is the visible text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return get(b, "read "+sel, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
}

// eventuallyText reloads path until sel's text contains want (the UI polls nothing by itself:
// a person presses reload, and so does the test).
func (b *browser) eventuallyText(path, sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.open(path)
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
		cancel()
		if err == nil && strings.Contains(s, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never showed %q in %s (last: %q, err %v)", path, want, sel, s, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// sessionCookie returns the browser's session cookie value, checking its flags.
func (b *browser) sessionCookie() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.base + "/ui/"}})
	if err != nil {
		b.t.Fatalf("read cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == "taskloom_session" {
			if !c.HTTPOnly || c.SameSite == "" {
				b.t.Fatalf("session cookie must be HttpOnly and SameSite: %+v", c)
			}
			return c.Value
		}
	}
	return ""
}

// initAndLogin runs the first-run init through the form and returns signed in.
func (b *browser) initAndLogin(user, pass string) {
	b.t.Helper()
	b.open("/ui/")
	if p := b.path(); !strings.HasPrefix(p, "/ui/init") {
		b.t.Fatalf("first visit went to %s, want the init page", p)
	}
	b.fill(map[string]string{"#username": user, "#password": pass, "#password_confirm": pass})
	b.submit("#submit", "#projects")
}
