package intake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
	tgfake "github.com/taskloom/taskloom/internal/fakes/telegram"
)

func TestBotSendMessageAgainstTheFake(t *testing.T) {
	fake, err := tgfake.Start("127.0.0.1:0", "1:tok")
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx := context.Background()
	bot := intake.NewBot(fake.URL, "1:tok")

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

	_, err = intake.NewBot(fake.URL, "1:wrong").SendMessage(ctx, "42", "x", 0)
	if !errors.Is(err, entry.ErrRejected) || errors.Is(err, context.Canceled) {
		t.Fatalf("wrong token: %v", err)
	}
	long := make([]rune, intake.MaxMessageLen+10)
	for i := range long {
		long[i] = 'я'
	}
	if _, err := bot.SendMessage(ctx, "42", string(long), 0); err != nil {
		t.Fatal(err)
	}
	if m := fake.Messages(); len([]rune(m[len(m)-1].Text)) != intake.MaxMessageLen {
		t.Fatalf("long text not cut to %d characters", intake.MaxMessageLen)
	}
}
