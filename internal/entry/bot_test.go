package entry_test

import (
	"testing"

	"github.com/taskloom/taskloom/internal/entry"
)

func TestReplyText(t *testing.T) {
	if got := entry.ReplyText(map[string]any{"text": "hi", "x": 1}, "text"); got != "hi" {
		t.Fatal(got)
	}
	if got := entry.ReplyText(map[string]any{"url": "u"}, "text"); got != `{"url":"u"}` {
		t.Fatal(got)
	}
}
