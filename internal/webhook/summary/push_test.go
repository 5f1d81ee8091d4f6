package summary

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/webhook"
)

func TestPushPlainAndBotMode(t *testing.T) {
	var got []map[string]any
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		got = append(got, m)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"code":0,"msg":"success"}`))
	}))
	defer srv.Close()
	p := &webhook.Payload{BizType: webhook.BizVideoScreenCapture, RecordID: "rec1", TaskIDs: []string{"1"}, Drama: map[string]any{}, Records: []map[string]any{{"a": "b"}}}
	if err := (&Pusher{}).Push(t.Context(), srv.URL, p); err != nil {
		t.Fatal(err)
	}
	if got[0]["biz_type"] != webhook.BizVideoScreenCapture || got[0]["record_id"] != "rec1" {
		t.Fatalf("plain body %+v", got[0])
	}
	now := time.Unix(1765944000, 0)
	if err := (&Pusher{Secret: "s3cret", Now: func() time.Time { return now }}).Push(t.Context(), srv.URL, p); err != nil {
		t.Fatal(err)
	}
	bot := got[1]
	if bot["msg_type"] != "text" || bot["timestamp"] != "1765944000" || bot["sign"] != BotSign(1765944000, "s3cret") {
		t.Fatalf("bot body %+v", bot)
	}
	status = http.StatusBadGateway
	if err := (&Pusher{}).Push(t.Context(), srv.URL, p); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("502 push: %v", err)
	}
}

func TestBotSignKnownValue(t *testing.T) {
	// key = "1600000000\nsecret", message empty, HMAC-SHA256, base64.
	// Expected value computed independently: printf '' | openssl dgst -sha256 -hmac $'1600000000\nsecret' -binary | base64
	if got := BotSign(1600000000, "secret"); got != "vvU1S4ucHy95pQ90meMW66yQJ+Szge4s9g7hQUu9yP8=" {
		t.Fatalf("sign = %s", got)
	}
}
