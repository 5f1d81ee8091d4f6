package entry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Entry task ids are computable from their keys (telegram:<workflow>:<chat>:<update id>, or a
// chat and a time bucket). A key bound to an unrelated project computed one and read the other
// chat's text. Now only the task's owner, or an admin key bound to no project, reads a task;
// everyone else gets the 404 of a task that does not exist.
func TestEntryTaskIsReadOnlyByItsOwner(t *testing.T) {
	f := newFixture(t)
	stranger := f.env.NewKey(auth.PermRead, "unrelated")
	boundAdmin := f.env.NewKey(auth.PermAdmin, "unrelated")
	get := func(id, key string) (int, string) {
		r := f.env.Do(http.MethodGet, "/api/workflows/tasks/"+id, key, nil)
		return r.Status, string(r.Body)
	}
	wantHidden := func(id, key, who string) {
		t.Helper()
		status, body := get(id, key)
		if status != http.StatusNotFound || !strings.Contains(body, "RESOURCE_NOT_FOUND") || strings.Contains(body, "secret") {
			t.Fatalf("%s read task %s: %d %s, want 404 RESOURCE_NOT_FOUND", who, id, status, body)
		}
	}

	// A Telegram task: its id is computed, not learned.
	if r := f.webhook(telegramUpdate(9, 4242, "my secret words"), tgSecret); r.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	computed := entry.TaskID(entry.BuildKey(entry.ChannelTelegram, f.pipeline, "4242", "9"))
	f.waitStatus(computed, entry.StatusCompleted, 30*time.Second) // the unbound admin key reads it
	wantHidden(computed, stranger, "a read key bound to an unrelated project")
	wantHidden(computed, boundAdmin, "an admin key bound to a project")

	// An HTTP task: its creator reads it, another key does not, running or done.
	creator, other := f.env.NewKey(auth.PermWrite, ""), f.env.NewKey(auth.PermWrite, "")
	body := f.applyBody("chat-own", "secret plans", map[string]any{"idempotencyKey": testenv.Unique("own-"),
		"context": map[string]any{"owner": "key:someone-else"}}) // the body cannot name the owner
	r := f.env.Do(http.MethodPost, "/api/workflows/apply", creator, body)
	if r.Status != http.StatusAccepted {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["taskId"].(string)
	wantHidden(id, other, "another write key")
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	if status, body := get(id, creator); status != http.StatusOK || !strings.Contains(body, `"completed"`) {
		t.Fatalf("the creator reads its task: %d %s", status, body)
	}
	wantHidden(id, other, "another write key")
	wantHidden(id, stranger, "a read key bound to an unrelated project")

	// Another key sending the same idempotency key enqueues nothing and learns nothing of it.
	r = f.env.Do(http.MethodPost, "/api/workflows/apply", other, body)
	if r.Status != http.StatusConflict || strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), id) {
		t.Fatalf("another key's apply with the creator's key: %d %s, want 409 without the task", r.Status, r.Body)
	}
	if r = f.env.Do(http.MethodPost, "/api/workflows/apply", creator, body); r.Status != http.StatusOK {
		t.Fatalf("the creator's repeat answers its recorded status: %d %s", r.Status, r.Body)
	}
}
