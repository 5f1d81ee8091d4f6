package entry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/telegrambot"
	"github.com/taskloom/taskloom/internal/testenv"
)

const token = "9:reply-test"

// runs is the workflow_runs store with a fault: the record of part failPart (1-based) fails
// failTimes times, as when MongoDB does not answer or the worker dies right after the send.
type runs struct {
	*entrydb.Store
	failPart, failTimes int
}

func (r *runs) RecordReplyPart(ctx context.Context, taskID string, p entry.Reply) (bool, error) {
	if p.Sent == r.failPart && r.failTimes > 0 {
		r.failTimes--
		return false, errors.New("mongo: connection refused")
	}
	return r.Store.RecordReplyPart(ctx, taskID, p)
}

type replyFixture struct {
	t    *testing.T
	tg   *telegram.Server
	db   *mongo.Database
	runs *runs
	acts *entryact.Activities
	req  entry.ReplyRequest
}

// newReplyFixture is a recorded Telegram task whose reply is text, the fake Bot API and the
// activities over both.
func newReplyFixture(t *testing.T, chat, text string) *replyFixture {
	t.Helper()
	tg, err := telegram.Start("127.0.0.1:0", token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	db := testenv.Mongo(t)
	store := entrydb.New(db)
	key := testenv.Unique("telegram:wf:" + chat + ":")
	id := entry.TaskID(key)
	if _, err := store.Accept(context.Background(), &entry.Run{TaskID: id, IdempotencyKey: key, ChatID: chat, Status: entry.StatusPending}); err != nil {
		t.Fatal(err)
	}
	r := &runs{Store: store}
	return &replyFixture{t: t, tg: tg, db: db, runs: r, req: entry.ReplyRequest{TaskID: id, ChatID: chat, Text: text, ReplyTo: 77},
		acts: &entryact.Activities{Runs: r, Bot: telegrambot.New(tg.URL, token), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
}

// attempt runs one attempt of EntrySendReply, as Temporal does on each retry.
func (f *replyFixture) attempt() (*entry.Reply, error) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(f.acts)
	v, err := env.ExecuteActivity(f.acts.EntrySendReply, f.req)
	if err != nil {
		return nil, err
	}
	var r entry.Reply
	return &r, v.Get(&r)
}

// arrived checks that the chat got the reply whole, in order, each part once and within
// Telegram's limit, the first answering the user's message; it returns the number of messages.
func (f *replyFixture) arrived() int {
	f.t.Helper()
	msgs := f.tg.MessagesTo(f.req.ChatID)
	var got strings.Builder
	for i, m := range msgs {
		got.WriteString(m.Text)
		if n := entry.UTF16Len(m.Text); n > entry.MaxMessageUTF16 {
			f.t.Errorf("message %d is %d UTF-16 units", i, n)
		}
		if (i == 0) != (m.ReplyTo == f.req.ReplyTo) {
			f.t.Errorf("message %d replies to %d", i, m.ReplyTo)
		}
	}
	if got.String() != f.req.Text {
		f.t.Fatalf("the chat got %d messages that are not the reply (%d of %d bytes)", len(msgs), got.Len(), len(f.req.Text))
	}
	return len(msgs)
}

// longReplies are 5,000-character replies: ASCII words, CJK without spaces, emoji (surrogate
// pairs, one straddling the limit).
var longReplies = map[string]string{
	"ascii": strings.Repeat("lorem ipsum dolor sit amet ", 186)[:5000],
	"cjk":   strings.Repeat("长文本回复需要拆分", 556)[:5000*3],
	"emoji": "a" + strings.Repeat("😀", 2500),
}

func TestLongReplyArrivesWholeInParts(t *testing.T) {
	for name, text := range longReplies {
		t.Run(name, func(t *testing.T) {
			f := newReplyFixture(t, "42", text)
			r, err := f.attempt()
			if err != nil {
				t.Fatal(err)
			}
			n := f.arrived()
			if n < 2 || r.Status != entry.ReplySent || r.Parts != n || r.Sent != n || len(r.MessageIDs) != n {
				t.Fatalf("%d messages, reply %+v", n, r)
			}
			// A retry of an attempt that finished (its completion lost) sends nothing.
			if again, err := f.attempt(); err != nil || again.Sent != n || f.arrived() != n {
				t.Fatalf("a repeated attempt: %+v %v", again, err)
			}
		})
	}
}

// Telegram failing between two parts (a 502, then a 429 with retry_after): each retry starts
// after the last part recorded, so no part arrives twice.
func TestRetriesBetweenPartsSendNoPartTwice(t *testing.T) {
	text := strings.Repeat("第一段 with 😀 emoji.\n", 700) // 4 parts
	f := newReplyFixture(t, "43", text)
	f.tg.Fail(1, 1, http.StatusBadGateway)
	if _, err := f.attempt(); err == nil {
		t.Fatal("the attempt Telegram failed succeeded")
	}
	if n := len(f.tg.MessagesTo("43")); n != 1 {
		t.Fatalf("after the 502: %d messages", n)
	}
	f.tg.RateLimit(1, 4)
	_, err := f.attempt()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != entry.ErrTypeTelegramRateLimited || ae.NextRetryDelay() != 4*time.Second {
		t.Fatalf("429: %v", err)
	}
	r, err := f.attempt()
	if err != nil {
		t.Fatal(err)
	}
	if n := f.arrived(); n != 4 || r.Sent != 4 {
		t.Fatalf("%d messages, reply %+v", n, r)
	}
}

// A worker whose attempt dies after Telegram accepted a part and before the part was recorded
// is the window sendMessage leaves open (it has no idempotency key): that part, and only that
// one, arrives twice. A record that fails for a moment is tried again before giving up, so it
// sends nothing twice.
func TestAPartSentButNeverRecordedIsTheOneSentAgain(t *testing.T) {
	f := newReplyFixture(t, "44", longReplies["ascii"])
	f.runs.failPart, f.runs.failTimes = 1, 2 // a blip: two failed writes, the third lands
	if _, err := f.attempt(); err != nil {
		t.Fatal(err)
	}
	if n := f.arrived(); n != 2 {
		t.Fatalf("after a blip: %d messages", n)
	}

	g := newReplyFixture(t, "45", longReplies["ascii"])
	g.runs.failPart, g.runs.failTimes = 1, 1000 // never recorded: the attempt ends as a dead worker's would
	if _, err := g.attempt(); err == nil {
		t.Fatal("an attempt whose record failed succeeded")
	}
	g.runs.failTimes = 0
	if _, err := g.attempt(); err != nil {
		t.Fatal(err)
	}
	msgs := g.tg.MessagesTo("45")
	if len(msgs) != 3 || msgs[0].Text != msgs[1].Text || msgs[0].Text+msgs[2].Text != g.req.Text {
		t.Fatalf("want the unrecorded first part twice, then the second: %d messages", len(msgs))
	}
}

// A chat that blocked the bot, or one Telegram does not know, refuses the reply for good: the
// error is final (no retry) and says why.
func TestRefusedReplyIsFinal(t *testing.T) {
	for chat, want := range map[string]string{"46": "bot was blocked by the user", "47": "chat not found"} {
		f := newReplyFixture(t, chat, "hello")
		f.tg.Block("46")
		f.tg.NoSuchChat("47")
		_, err := f.attempt()
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != entry.ErrTypeTelegramRejected || !strings.Contains(ae.Message(), want) {
			t.Fatalf("chat %s: %v", chat, err)
		}
	}
}

// A reply sent as one message before replies were split (reply_message_id, no reply field) is
// not sent again.
func TestReplySentBeforeSplittingIsNotSentAgain(t *testing.T) {
	f := newReplyFixture(t, "48", longReplies["cjk"])
	if _, err := f.db.Collection(entrydb.CollRuns).UpdateByID(context.Background(), f.req.TaskID,
		bson.D{{Key: "$set", Value: bson.D{{Key: "reply_message_id", Value: 900}}}}); err != nil {
		t.Fatal(err)
	}
	r, err := f.attempt()
	if err != nil || r.Status != entry.ReplySent || len(f.tg.Messages()) != 0 {
		t.Fatalf("%+v %v, %d messages", r, err, len(f.tg.Messages()))
	}
}
