package telegrambot_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/telegrambot"
)

func TestBotSendMessageAgainstTheFake(t *testing.T) {
	fake, err := telegram.Start("127.0.0.1:0", "1:tok")
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx := context.Background()
	bot := telegrambot.New(fake.URL, "1:tok")

	id, err := bot.SendMessage(ctx, "42", "hello", 7)
	if err != nil || id == 0 {
		t.Fatalf("send: %d %v", id, err)
	}
	if m := fake.Messages(); len(m) != 1 || m[0].ChatID != "42" || m[0].Text != "hello" || m[0].ReplyTo != 7 {
		t.Fatalf("recorded: %+v", m)
	}

	fake.RateLimit(1, 3)
	_, err = bot.SendMessage(ctx, "42", "again", 0)
	var ra *entry.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 3*time.Second {
		t.Fatalf("429: %v", err)
	}
	if _, err := bot.SendMessage(ctx, "42", "again", 0); err != nil {
		t.Fatalf("after retry_after: %v", err)
	}

	_, err = telegrambot.New(fake.URL, "1:wrong").SendMessage(ctx, "42", "x", 0)
	if !errors.Is(err, entry.ErrRejected) || errors.Is(err, context.Canceled) {
		t.Fatalf("wrong token: %v", err)
	}
	// Telegram refuses for good a text over its limit, a chat that blocked the bot and one it
	// does not know: each error says why.
	fake.Block("43")
	fake.NoSuchChat("44")
	for chat, text := range map[string]string{"42": strings.Repeat("😀", entry.MaxMessageUTF16/2+1), "43": "hi", "44": "hi"} {
		_, err := bot.SendMessage(ctx, chat, text, 0)
		if !errors.Is(err, entry.ErrRejected) {
			t.Fatalf("chat %s: %v", chat, err)
		}
		t.Logf("chat %s: %v", chat, err)
	}
	if _, err := bot.SendMessage(ctx, "42", strings.Repeat("😀", entry.MaxMessageUTF16/2), 0); err != nil {
		t.Fatalf("a text at the limit: %v", err)
	}
}
