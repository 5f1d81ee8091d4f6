package entry_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// longReplies are 5,000-character replies: ASCII words, CJK without spaces, emoji (surrogate
// pairs, one straddling Telegram's limit).
var longReplies = map[string]string{
	"ascii": strings.Repeat("lorem ipsum dolor sit amet ", 186)[:5000],
	"cjk":   strings.Repeat("长文本回复需要拆分", 556)[:5000*3],
	"emoji": "a" + strings.Repeat("😀", 2500),
}

// telegramTask sends a message to chat whose pipeline answers reply, and returns the task id.
func (f *fixture) telegramTask(updateID, chat int64, reply string) string {
	f.t.Helper()
	text := "question " + strconv.FormatInt(updateID, 10)
	f.vendor.replies.Store(text, reply)
	r := f.webhook(telegramUpdate(updateID, chat, text), tgSecret)
	if r.Status != http.StatusOK || r.Map(f.t)["taskId"] == nil {
		f.t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	return r.Map(f.t)["taskId"].(string)
}

// waitReply polls the task until its reply has status, and returns the reply.
func (f *fixture) waitReply(id, status string) map[string]any {
	f.t.Helper()
	var reply map[string]any
	e2e.Eventually(f.t, 60*time.Second, "the reply of "+id+" to be "+status, func() bool {
		reply, _ = f.status(id)["reply"].(map[string]any)
		return reply != nil && reply["status"] == status
	})
	return reply
}

// arrivedWhole checks that chat got text in order, each part once and within Telegram's limit,
// and returns the number of messages.
func arrivedWhole(t *testing.T, tg *telegram.Server, chat, text string) int {
	t.Helper()
	msgs := tg.MessagesTo(chat)
	var got strings.Builder
	for i, m := range msgs {
		got.WriteString(m.Text)
		if n := entry.UTF16Len(m.Text); n > entry.MaxMessageUTF16 {
			t.Errorf("chat %s: message %d is %d UTF-16 units", chat, i, n)
		}
		if i > 0 && m.MessageID <= msgs[i-1].MessageID {
			t.Errorf("chat %s: message %d out of order", chat, i)
		}
	}
	if got.String() != text {
		t.Fatalf("chat %s: %d messages are not the reply (%d of %d bytes)", chat, len(msgs), got.Len(), len(text))
	}
	return len(msgs)
}

// A 5,000-character reply (ASCII, CJK, emoji) arrives whole in two or more messages, in order,
// the first answering the user's message; the task shows the reply sent with its parts.
func TestLongRepliesArriveWholeInParts(t *testing.T) {
	f := newFixture(t)
	chats := map[string]int64{"ascii": 501, "cjk": 502, "emoji": 503}
	ids := map[string]string{}
	for name, chat := range chats {
		ids[name] = f.telegramTask(chat*10, chat, longReplies[name])
	}
	for name, chat := range chats {
		reply := f.waitReply(ids[name], entry.ReplySent)
		c := strconv.FormatInt(chat, 10)
		n := arrivedWhole(t, f.tg, c, longReplies[name])
		if n < 2 || reply["parts"] != float64(n) || reply["sent"] != float64(n) || f.tg.MessagesTo(c)[0].ReplyTo != chat*10+7 {
			t.Fatalf("%s: %d messages, reply %v", name, n, reply)
		}
	}
	f.saveHistory(ids["emoji"], "telegram_reply_parts")
}

// A worker dies while a reply is between two parts (the first went out, the second is on its
// way); another worker finishes the reply: every part arrives once, in order.
func TestWorkerKilledBetweenPartsSendsNoPartTwice(t *testing.T) {
	f := newFixture(t)
	text := strings.Repeat("第一段 with 😀 emoji and words.\n", 600)
	f.tg.HoldAfter(1)
	id := f.telegramTask(6001, 601, text)
	e2e.Eventually(t, 30*time.Second, "the first part out and the second held", func() bool {
		return len(f.tg.MessagesTo("601")) == 1 && f.tg.Held() == 1
	})
	f.env.StopWorker()
	e2e.Eventually(t, 10*time.Second, "the dead worker's call to be gone", func() bool { return f.tg.Held() == 0 })
	f.tg.Release()
	f.env.StartWorker()
	reply := f.waitReply(id, entry.ReplySent)
	n := arrivedWhole(t, f.tg, "601", text)
	if n < 3 || reply["sent"] != float64(n) {
		t.Fatalf("%d messages, reply %v", n, reply)
	}
	if calls := f.vendor.calls.Load(); calls != 1 {
		t.Fatalf("the pipeline ran %d times", calls)
	}
}

// A reply Telegram refuses — the user blocked the bot (403), the chat does not exist (400) — is
// not retried, and shows: the task is completed with reply.status failed and Telegram's error,
// in the task status, in /internal/tasks/{id} and in the stats.
func TestRefusedReplyShowsOnTheTaskAndInStats(t *testing.T) {
	// The stats count across the Temporal namespace: a namespace of its own keeps earlier runs'
	// (and other tests') refused replies out of the count.
	f := newFixture(t, e2e.OwnNamespace(t))
	f.tg.Block("701")
	f.tg.NoSuchChat("702")
	cases := map[string]string{"701": "Forbidden: bot was blocked by the user", "702": "Bad Request: chat not found"}
	ids := map[string]string{}
	for chat := range cases {
		c, _ := strconv.ParseInt(chat, 10, 64)
		ids[chat] = f.telegramTask(c*10, c, "an answer nobody will read")
	}
	for chat, want := range cases {
		reply := f.waitReply(ids[chat], entry.ReplyFailed)
		st := f.status(ids[chat])
		if st["status"] != entry.StatusCompleted || st["lastError"] != nil || !strings.Contains(reply["error"].(string), want) || reply["at"] == nil {
			t.Fatalf("chat %s: %v", chat, st)
		}
		r := f.env.Do(http.MethodGet, "/internal/tasks/"+ids[chat], f.env.AdminKey, nil)
		run, _ := r.Map(t)["run"].(map[string]any)
		if r.Status != http.StatusOK || run["reply"].(map[string]any)["status"] != entry.ReplyFailed {
			t.Fatalf("chat %s ops view: %d %s", chat, r.Status, r.Body)
		}
		if n := len(f.tg.MessagesTo(chat)); n != 0 {
			t.Fatalf("chat %s got %d messages", chat, n)
		}
	}
	e2e.Eventually(t, 10*time.Second, "stats to count both failed replies", func() bool {
		var st intake.Stats
		f.env.Do(http.MethodGet, "/internal/tasks/stats", f.env.AdminKey, nil).JSON(t, &st)
		return st.Replies.Failed == 2
	})
	// The refusal ended the reply: the executions are closed, nothing is retrying.
	for _, id := range ids {
		if err := f.env.Platform.Temporal.GetWorkflow(f.env.Context(), id, "").Get(f.env.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	f.saveHistory(ids["701"], "telegram_reply_failed")
}
