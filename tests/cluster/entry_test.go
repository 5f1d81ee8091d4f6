//go:build cluster

package cluster_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The fake Bot API's stand-in for the assistant a bot's pipeline calls
// (internal/devstack/fakes/telegram.AssistantPath), and the provider the entry pipeline calls it as.
const (
	assistantPath     = "/_assistant"
	assistantProvider = "entry_assistant"
)

var entrySeeded = sync.OnceValue(seedEntryPipeline)

// entryPipeline is the pipeline the entry tests apply to: TELEGRAM_WORKFLOW_ID (entry_echo by
// default), a one-step pipeline over the fake assistant. It publishes it with the entry quota
// through the API when the cluster's seed did not (the same definition `make dev` seeds).
func entryPipeline(t testing.TB) string {
	t.Helper()
	if err := entrySeeded(); err != nil {
		t.Fatal(err)
	}
	return cmp.Or(cl.env["TELEGRAM_WORKFLOW_ID"], "entry_echo")
}

func seedEntryPipeline() error {
	name := cmp.Or(cl.env["TELEGRAM_WORKFLOW_ID"], "entry_echo")
	tg := strings.TrimRight(cl.env["TELEGRAM_API_BASE_URL"], "/")
	if tg == "" {
		return errors.New("cluster.env has no TELEGRAM_API_BASE_URL (the fake Bot API)")
	}
	api := cl.api(0)
	if a, err := try(request{method: http.MethodGet, url: api + "/api/v1/providers/" + assistantProvider, key: cl.adminKey}); err != nil {
		return err
	} else if a.Status == http.StatusNotFound {
		if err := expect(request{method: http.MethodPut, url: api + "/api/v1/providers/" + assistantProvider, key: cl.adminKey,
			body: map[string]any{"base_url": tg + assistantPath}}, http.StatusOK, http.StatusCreated); err != nil {
			return err
		}
	}
	def := map[string]any{"name": name, "version": "1.0.0", "schema": map[string]any{"steps": []map[string]any{{
		"name": "assistant_reply", "type": "sync_api", "provider_ref": assistantProvider, "endpoint": "/reply",
		"input_mapping":  map[string]any{"text": "${input_data.user_text}", "history": "${input_data.history_chunks}"},
		"output_mapping": map[string]any{"text": "$.reply", "history_len": "history_len"}, "timeout_seconds": 30}}}}
	if err := expect(request{method: http.MethodPost, url: api + "/api/v1/pipelines", key: cl.adminKey, body: def},
		http.StatusOK, http.StatusCreated, http.StatusConflict); err != nil {
		return err
	}
	quota := "/api/v1/quotas/" + url.PathEscape(cmp.Or(cl.env["ENTRY_USER_ID"], "entry")) + "/" + url.PathEscape(cmp.Or(cl.env["ENTRY_FEATURE_ID"], "entry"))
	return expect(request{method: http.MethodPut, url: api + quota, key: cl.adminKey, body: map[string]any{"remaining": 100000}}, http.StatusOK)
}

// expect sends r and says what went wrong unless the answer has one of the statuses.
func expect(r request, statuses ...int) error {
	a, err := try(r)
	if err != nil {
		return err
	}
	for _, s := range statuses {
		if a.Status == s {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %d %s", r.method, r.url, a.Status, a.Body)
}

// entryTask is the part of an entry task's status the tests read.
type entryTask struct {
	TaskID    string `json:"taskId"`
	Status    string `json:"status"`
	Duplicate bool   `json:"duplicate"`
	LastError string `json:"lastError"`
}

func applyBody(workflow, key, text string) map[string]any {
	return map[string]any{"workflowId": workflow, "userText": text, "historyChunks": []any{},
		"coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": key}}, "idempotencyKey": key}
}

// awaitEntryTask reads the task on API instance api until it is completed.
func awaitEntryTask(t testing.TB, api int, id string, timeout time.Duration) {
	t.Helper()
	var last entryTask
	eventually(t, timeout, "entry task "+id+" to complete", func() bool {
		a, err := try(request{method: http.MethodGet, url: cl.api(api) + "/api/workflows/tasks/" + id, key: cl.adminKey})
		if err == nil && a.Status == http.StatusOK {
			a.decode(t, &last)
		}
		if last.Status == "suspended" || last.Status == "failed" || last.Status == "dropped" {
			t.Fatalf("entry task %s: %s (%s)", id, last.Status, last.LastError)
		}
		return last.Status == "completed"
	})
}

// An apply over HTTP on one API instance completes and reads the same on the other, where the
// same idempotency key names the same task; a Telegram update, delivered twice (once to each
// instance, as Telegram redelivers), runs once and the fake Bot API gets exactly one reply.
func TestEntryApplyAndTelegramUpdate(t *testing.T) {
	workflow := entryPipeline(t)
	key := testenv.Unique("cluster-apply-")
	body := applyBody(workflow, key, "hello cluster")
	body["waitForResult"], body["waitTimeoutSeconds"] = true, 30
	var first entryTask
	call(t, request{method: http.MethodPost, url: cl.api(0) + "/api/workflows/apply", key: cl.adminKey, body: body}, http.StatusOK).decode(t, &first)
	if first.Status != "completed" {
		t.Fatalf("apply with waitForResult: %+v, want completed", first)
	}
	awaitEntryTask(t, 1, first.TaskID, 30*time.Second)
	var again entryTask
	a := call(t, request{method: http.MethodPost, url: cl.api(1) + "/api/workflows/apply", key: cl.adminKey, body: applyBody(workflow, key, "hello cluster")}, http.StatusOK)
	a.decode(t, &again)
	if again.TaskID != first.TaskID {
		t.Errorf("the same idempotency key on the other instance: task %s, want %s", again.TaskID, first.TaskID)
	}

	secret := cl.need(t, "TELEGRAM_WEBHOOK_SECRET")
	updateID := rand.Int64N(1 << 40)
	chatID := rand.Int64N(1<<40) + 1
	chat := strconv.FormatInt(chatID, 10)
	update := map[string]any{"update_id": updateID, "message": map[string]any{"message_id": 1, "date": time.Now().Unix(),
		"chat": map[string]any{"id": chatID, "type": "private"}, "text": "hi cluster bot"}}
	var tasks []string
	for i := range 2 {
		var got struct {
			TaskID    string `json:"taskId"`
			Duplicate bool   `json:"duplicate"`
		}
		call(t, request{method: http.MethodPost, url: cl.api(i) + "/telegram/webhook", body: update,
			header: map[string]string{"X-Telegram-Bot-Api-Secret-Token": secret}}, http.StatusOK).decode(t, &got)
		if got.TaskID == "" || got.Duplicate != (i == 1) {
			t.Fatalf("delivery %d of update %d: %+v", i+1, updateID, got)
		}
		tasks = append(tasks, got.TaskID)
	}
	if tasks[0] != tasks[1] {
		t.Fatalf("a redelivered update started task %s besides %s", tasks[1], tasks[0])
	}
	awaitEntryTask(t, 0, tasks[0], time.Minute)
	replies := func() int { return len(telegramMessagesTo(t, chat)) }
	eventually(t, 30*time.Second, "the bot's reply to chat "+chat, func() bool { return replies() > 0 })
	if n := replies(); n != 1 {
		t.Errorf("chat %s got %d replies, want exactly one", chat, n)
	}
}

// telegramMessagesTo lists the messages the fake Bot API accepted for chat.
func telegramMessagesTo(t testing.TB, chat string) []string {
	t.Helper()
	var msgs []struct {
		ChatID string `json:"chat_id"`
		Text   string `json:"text"`
	}
	get(t, strings.TrimRight(cl.need(t, "TELEGRAM_API_BASE_URL"), "/")+"/_admin/messages", &msgs)
	var out []string
	for _, m := range msgs {
		if m.ChatID == chat {
			out = append(out, m.Text)
		}
	}
	return out
}
