package ui_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// TestConsoleRedrive: a failed task's page has the redrive button, which redrives it once even
// when submitted twice; the bulk form shows the dry-run count of the filter's failed tasks, and
// its confirm button redrives them.
func TestConsoleRedrive(t *testing.T) {
	t.Parallel()
	env := e2e.New(t)
	vendor := startConsoleVendor(t)
	name := testenv.Unique("console_redrive_")
	store, ctx := pipelinedb.New(env.Platform.Mongo), env.Context()
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: name + "_vendor", BaseURL: vendor.srv.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{OnFailure: "refund_quota", Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: name + "_vendor", Endpoint: "/reply",
		InputMapping: map[string]any{"text": "hi"}, OutputMapping: map[string]string{"text": "$.reply"},
		Retry: &pipeline.Retry{MaxAttempts: 1}, TimeoutSeconds: 20,
	}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, "console-user", "feat", 10); err != nil {
		t.Fatal(err)
	}
	vendor.fail.Store(true)
	failed := func() string {
		id := apiCall(t, env, http.MethodPost, "/api/v1/pipeline-tasks", map[string]any{"pipeline": name, "user_id": "console-user",
			"feature_id": "feat"}).Map(t)["task_id"].(string)
		waitPipelineTask(t, store, id, pipeline.StatusFailed)
		return id
	}
	one, two, three := failed(), failed(), failed()
	vendor.fail.Store(false)

	usr, err := uisession.NewUsers(env.Platform.Mongo).Init(ctx, "admin", "admin password")
	if err != nil {
		t.Fatal(err)
	}
	tok, csrf := sessionFor(t, env, usr)

	page := pageBody(t, env, "/ui/console/pipelines/"+one, tok)
	// The runbook names this task's own commands, the redrive among them while it is failed.
	for _, cmd := range []string{"./.bin/temporal workflow describe --workflow-id pipeline-" + one,
		"./.bin/starter pipeline redrive " + one + " --dry-run"} {
		if !strings.Contains(page, cmd) {
			t.Fatalf("the failed task's runbook lacks %q", cmd)
		}
	}
	key := formValue(t, page, "redrive_key")
	for range 2 { // a double submit is one redrive
		if r := postForm(t, env.API.URL, "/ui/console/pipelines/"+one+"/redrive", tok,
			url.Values{"csrf_token": {csrf}, "redrive_key": {key}}); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("redrive button: %d", r.StatusCode)
		}
	}
	task := waitPipelineTask(t, store, one, pipeline.StatusSuccess)
	if task.RedriveCount != 1 {
		t.Fatalf("redrive_count %d after a double submit", task.RedriveCount)
	}
	if page := pageBody(t, env, "/ui/console/pipelines/"+one, tok); strings.Contains(page, `id="redrive"`) || !strings.Contains(page, "1 次") {
		t.Fatal("a succeeded task's page offers the redrive button, or does not show the redrive")
	}

	dry := pageBody(t, env, "/ui/console/pipelines/redrive?pipeline="+name, tok)
	if !strings.Contains(dry, `<b id="bulk-count">2</b>`) || !strings.Contains(dry, two) || !strings.Contains(dry, three) {
		t.Fatalf("dry run page: %s", dry)
	}
	if r := postForm(t, env.API.URL, "/ui/console/pipelines/redrive", tok, url.Values{"csrf_token": {csrf},
		"bulk_key": {formValue(t, dry, "bulk_key")}, "pipeline": {name}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk confirm: %d", r.StatusCode)
	}
	waitPipelineTask(t, store, two, pipeline.StatusSuccess)
	waitPipelineTask(t, store, three, pipeline.StatusSuccess)
	if bad := pageBody(t, env, "/ui/console/pipelines/redrive?failed_since=yesterday", tok); !strings.Contains(bad, `id="bulk-problem"`) {
		t.Fatal("a bad time in the bulk form is not stated")
	}
}

func waitPipelineTask(t *testing.T, store *pipelinedb.Store, id, status string) *pipeline.Task {
	t.Helper()
	var task *pipeline.Task
	e2e.Eventually(t, time.Minute, "pipeline task "+id+" to be "+status, func() bool {
		got, err := store.GetTask(t.Context(), id)
		task = got
		return err == nil && got.Status == status
	})
	return task
}

func pageBody(t *testing.T, env *e2e.Env, path, tok string) string {
	t.Helper()
	resp := getPage(t, env.API.URL, path, tok)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return string(body)
}

func formValue(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s in the page", name)
	}
	return m[1]
}
