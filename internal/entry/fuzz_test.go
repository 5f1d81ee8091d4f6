package entry_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
)

// FuzzParseApplyRequest: any body either fails with a FieldError naming a field, or yields an
// envelope with a valid task id derived from a valid key, and the required fields set.
func FuzzParseApplyRequest(f *testing.F) {
	for _, s := range []string{
		`{"workflowId":"wf","userText":"hi","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"1"}}}`,
		`{"workflowId":"wf","userText":"hi","historyChunks":["a"],"coreEnvelope":{"metadata":{"chat_id":-100123}},"idempotencyKey":"k"}`,
		`{"workflowId":"wf","userText":"hi","historyChunks":null,"coreEnvelope":{"metadata":{"chat_id":1.5}}}`,
		`{"workflowId":"wf","userText":"hi","historyChunks":[],"coreEnvelope":{"metadata":[]},"retryMax":-1}`,
		`{"workflowId":7}`, `[]`, `{`, ``, `{"telemetry":{"channel":"telegram"},"context":{"idempotencyKey":"\u0000"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := entry.ParseApplyRequest(body)
		if err != nil {
			fe, ok := err.(*entry.FieldError)
			if !ok || fe.Field == "" {
				t.Fatalf("error without a field: %v", err)
			}
			return
		}
		env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Source: "fuzz", Now: time.Unix(1, 0), Window: time.Second})
		if !entry.ValidTaskID(env.TaskID) || env.TaskID != entry.TaskID(env.Context.IdempotencyKey) {
			t.Fatalf("task id %q for key %q", env.TaskID, env.Context.IdempotencyKey)
		}
		if env.Payload.WorkflowID == "" || env.Payload.ChatID() == "" || env.Payload.HistoryChunks == nil || env.Type != entry.TaskType {
			t.Fatalf("envelope lacks a required field: %+v", env)
		}
		if _, err := json.Marshal(env); err != nil {
			t.Fatalf("envelope does not encode: %v", err)
		}
	})
}

// FuzzTaskID: every key maps to one valid, stable task id; the generated key keeps its parts.
func FuzzTaskID(f *testing.F) {
	f.Add("http", "wf", "42", "1700000000")
	f.Add("telegram", "wf:with:colons", "-100", "9001")
	f.Add("", "", "", "")
	f.Add("cli", "名字", "chat\x00", "ts")
	f.Fuzz(func(t *testing.T, channel, wf, chat, ts string) {
		key := entry.BuildKey(channel, wf, chat, ts)
		if !strings.HasPrefix(key, channel+":") || !strings.HasSuffix(key, ":"+ts) {
			t.Fatalf("key %q lost its parts", key)
		}
		id := entry.TaskID(key)
		if !entry.ValidTaskID(id) || id != entry.TaskID(key) {
			t.Fatalf("task id %q", id)
		}
		if other := entry.TaskID(key + "x"); other == id {
			t.Fatalf("two keys share task id %s", id)
		}
	})
}

// FuzzMapUpdate: any webhook body is refused, ignored with a reason (an edit unless edits rerun),
// or mapped to a valid request keyed by its update id.
func FuzzMapUpdate(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"message":{"message_id":2,"chat":{"id":42},"text":"hi","reply_to_message":{"text":"before"}}}`), false)
	f.Add([]byte(`{"update_id":3,"edited_message":{"message_id":2,"chat":{"id":-100},"caption":"pic"}}`), true)
	f.Add([]byte(`{"update_id":3,"edited_message":{"message_id":2,"chat":{"id":-100},"text":"edit"}}`), false)
	f.Add([]byte(`{"update_id":4,"message":{"chat":{"id":1},"from":{"id":5,"is_bot":true},"text":"self"}}`), false)
	f.Add([]byte(`{"update_id":0}`), false)
	f.Add([]byte(`not json`), true)
	f.Fuzz(func(t *testing.T, body []byte, rerunEdits bool) {
		u, err := entry.ParseUpdate(body)
		if err != nil {
			return
		}
		req, ts, ignored := entry.MapUpdate(u, entry.TelegramIntake{Route: func(string) string { return "wf" }, RerunEdits: rerunEdits})
		if (req == nil) == (ignored == "") {
			t.Fatalf("request %v with reason %q", req, ignored)
		}
		if u.Message == nil && u.EditedMessage != nil && !rerunEdits && req != nil {
			t.Fatal("an edit became a task")
		}
		if req == nil {
			return
		}
		if err := req.Validate(); err != nil {
			if _, isField := err.(*entry.FieldError); !isField {
				t.Fatalf("validate: %v", err)
			}
			return
		}
		env := req.Envelope(entry.Defaults{Channel: entry.ChannelTelegram, KeyTS: ts})
		if want := entry.BuildKey(entry.ChannelTelegram, "wf", env.Payload.ChatID(), ts); env.Context.IdempotencyKey != want {
			t.Fatalf("key %q, want %q", env.Context.IdempotencyKey, want)
		}
	})
}
