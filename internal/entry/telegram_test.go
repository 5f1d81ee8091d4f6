package entry_test

import (
	"testing"

	"github.com/taskloom/taskloom/internal/entry"
)

// An edited_message is acknowledged and runs nothing unless edits rerun; then it maps like a
// message, keyed by its own update id.
func TestMapUpdateEdits(t *testing.T) {
	route := func(string) string { return "wf" }
	edit := &entry.Update{UpdateID: 9, EditedMessage: &entry.Message{MessageID: 2, Chat: entry.Chat{ID: 42}, Text: "fixed typo"}}
	if req, _, ignored := entry.MapUpdate(edit, entry.TelegramIntake{Route: route}); req != nil || ignored != entry.IgnoredEdit {
		t.Fatalf("default: %v %q", req, ignored)
	}
	req, ts, ignored := entry.MapUpdate(edit, entry.TelegramIntake{Route: route, RerunEdits: true})
	if req == nil || ignored != "" || ts != "9" || *req.UserText != "fixed typo" {
		t.Fatalf("rerun: %v %q %q", req, ts, ignored)
	}
	msg := &entry.Update{UpdateID: 8, Message: &entry.Message{MessageID: 2, Chat: entry.Chat{ID: 42}, Text: "fixd typo"}}
	if req, _, _ := entry.MapUpdate(msg, entry.TelegramIntake{Route: route}); req == nil {
		t.Fatal("a message is ignored")
	}
	for want, u := range map[string]*entry.Update{
		entry.IgnoredNoMessage: {UpdateID: 1},
		entry.IgnoredFromBot:   {UpdateID: 1, Message: &entry.Message{Chat: entry.Chat{ID: 1}, Text: "x", From: &entry.User{IsBot: true}}},
		entry.IgnoredNoText:    {UpdateID: 1, Message: &entry.Message{Chat: entry.Chat{ID: 1}}},
	} {
		if _, _, got := entry.MapUpdate(u, entry.TelegramIntake{Route: route}); got != want {
			t.Errorf("%+v: %q, want %q", u, got, want)
		}
	}
	noRoute := entry.TelegramIntake{Route: func(string) string { return "" }}
	if _, _, got := entry.MapUpdate(msg, noRoute); got != entry.IgnoredNoRoute {
		t.Errorf("no route: %q", got)
	}
}
