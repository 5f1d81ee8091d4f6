package ui_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// A Telegram task whose reply the user blocked shows on the entry page among the failed
// replies, with Telegram's error, and in the count.
func TestEntryPageListsFailedReplies(t *testing.T) {
	tg, err := telegram.Start("127.0.0.1:0", "5:console")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	name := testenv.Unique("console_tg_")
	// The page counts failed replies across the namespace: one of its own keeps other runs' out.
	env := e2e.New(t, e2e.OwnNamespace(t), func(c *config.Config) {
		c.Entry.TelegramBotToken, c.Entry.TelegramAPIBaseURL = "5:console", tg.URL
		c.Entry.TelegramWebhookSecret, c.Entry.TelegramWorkflowID = "console-secret", name
	})
	vendor := startConsoleVendor(t)
	store, ctx := pipelinedb.New(env.Platform.Mongo), env.Context()
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: name + "_vendor", BaseURL: vendor.srv.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: name + "_vendor", Endpoint: "/reply",
		InputMapping: map[string]any{"text": "${input_data.user_text}"}, OutputMapping: map[string]string{"text": "$.reply"},
	}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, "entry", "entry", 10); err != nil {
		t.Fatal(err)
	}
	tg.Block("321")

	body, _ := json.Marshal(map[string]any{"update_id": 90, "message": map[string]any{"message_id": 9, "date": time.Now().Unix(),
		"text": "are you there?", "chat": map[string]any{"id": 321, "type": "private"}, "from": map[string]any{"id": 321}}})
	req, _ := http.NewRequest(http.MethodPost, env.API.URL+"/telegram/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "console-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct {
		TaskID string `json:"taskId"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&accepted)
	resp.Body.Close()
	if accepted.TaskID == "" {
		t.Fatalf("webhook: %d", resp.StatusCode)
	}
	e2e.Eventually(t, 60*time.Second, "the reply to fail", func() bool {
		var st entry.TaskStatus
		apiCall(t, env, http.MethodGet, "/api/workflows/tasks/"+accepted.TaskID, nil).JSON(t, &st)
		return st.Reply != nil && st.Reply.Status == entry.ReplyFailed
	})

	usr, err := uisession.NewUsers(env.Platform.Mongo).Init(ctx, adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := sessionFor(t, env, usr)
	var page string
	e2e.Eventually(t, 10*time.Second, "the entry page to list the failed reply", func() bool {
		resp := getPage(t, env.API.URL, "/ui/console/entry", token)
		b, _ := io.ReadAll(resp.Body)
		page = html.UnescapeString(string(b))
		return resp.StatusCode == http.StatusOK && strings.Contains(page, `id="reply-`+accepted.TaskID+`"`)
	})
	_, row, _ := strings.Cut(page, `id="reply-`+accepted.TaskID+`"`)
	row, _, _ = strings.Cut(row, "</tr>")
	if !strings.Contains(row, "Forbidden: bot was blocked by the user") || !strings.Contains(row, "321") {
		t.Fatalf("failed reply row:\n%s", row)
	}
	if !strings.Contains(page, `id="failed-replies-total">1<`) {
		t.Fatal("the failed replies are not counted")
	}
}
