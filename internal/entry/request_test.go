package entry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
)

func TestRequiredFieldsAreNamed(t *testing.T) {
	cases := map[string]string{
		`{"userText":"x","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"1"}}}`:                   "workflowId",
		`{"workflowId":"w","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"1"}}}`:                 "userText",
		`{"workflowId":"w","userText":"x","coreEnvelope":{"metadata":{"chat_id":"1"}}}`:                     "historyChunks",
		`{"workflowId":"w","userText":"x","historyChunks":[]}`:                                              "coreEnvelope.metadata.chat_id",
		`{"workflowId":"w","userText":"x","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":true}}}`: "coreEnvelope.metadata.chat_id",
		`{"workflowId":"w","userText":"x","historyChunks":[],"coreEnvelope":{"metadata":"m"}}`:              "coreEnvelope.metadata",
		`{"workflowId":"w","userText":"x","historyChunks":"a","coreEnvelope":{"metadata":{"chat_id":"1"}}}`: "historyChunks",
		`{"workflowId":" w","userText":"x","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"1"}}}`: "workflowId",
	}
	for body, field := range cases {
		_, err := entry.ParseApplyRequest([]byte(body))
		var fe *entry.FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v, want field %s", body, err, field)
		}
	}
}

func TestGeneratedKeyFollowsTheSeed(t *testing.T) {
	req, err := entry.ParseApplyRequest([]byte(`{"workflowId":"wf","userText":"x","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":-1001}}}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000007, 0)
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Source: "http-api", RetryMax: 3, Now: now, Window: 10 * time.Second})
	if env.Context.IdempotencyKey != "http:wf:-1001:1700000000" || env.Retry.Max != 3 || env.Payload.Metadata["chat_id"] != "-1001" {
		t.Fatalf("envelope: %+v", env)
	}
	again := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Now: now.Add(2 * time.Second), Window: 10 * time.Second})
	if again.TaskID != env.TaskID {
		t.Fatal("a click two seconds later made another task")
	}
	given := `{"workflowId":"wf","userText":"x","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"c"}},"context":{"idempotencyKey":"mine"}}`
	req, _ = entry.ParseApplyRequest([]byte(given))
	if k := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Now: now}).Context.IdempotencyKey; k != "mine" {
		t.Fatalf("context.idempotencyKey ignored: %s", k)
	}
}

func TestRetryCurvesPerChannel(t *testing.T) {
	c := config.Defaults().Entry
	c.HTTPRetryDelays = []time.Duration{5 * time.Second, 30 * time.Second}
	c.TelegramRetryBase, c.TelegramRetryCap = 2*time.Second, 10*time.Second
	if got := entry.RetryDelays(&c, entry.ChannelHTTP, 4); got[0] != 5*time.Second || got[1] != 30*time.Second || got[3] != 30*time.Second {
		t.Fatalf("http: %v", got)
	}
	got := entry.RetryDelays(&c, entry.ChannelTelegram, 5)
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("telegram: %v, want %v", got, want)
		}
	}
	if n := len(entry.RetryDelays(&c, entry.ChannelCLI, 0)); n != 1 {
		t.Fatalf("a zero budget still needs one delay entry, got %d", n)
	}
}

// The owner is the intake's to say: a body's context.owner is replaced, and the accepted record
// carries the owner in the write that records the task.
func TestOwnerComesFromTheIntake(t *testing.T) {
	req, err := entry.ParseApplyRequest([]byte(`{"workflowId":"w","userText":"x","historyChunks":[],
		"coreEnvelope":{"metadata":{"chat_id":"1"}},"context":{"owner":"key:victim"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Now: time.Now(), Window: time.Second, Owner: entry.OwnerKey("k1")})
	if env.Context.Owner != "key:k1" || entry.NewRun(env).Owner != "key:k1" {
		t.Fatalf("owner %q (record %q), want key:k1", env.Context.Owner, entry.NewRun(env).Owner)
	}
}
