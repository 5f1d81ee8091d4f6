package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// call posts params to method as JSON and decodes the Bot API answer.
func call(t *testing.T, s *Server, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(params)
	resp, err := http.Post(s.URL+"/bot"+s.Token+"/"+method, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", "7:tok")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The refusals follow https://core.telegram.org/bots/api#sendmessage: text is 1-4096 UTF-16
// code units, a blocked chat is 403, an unknown one 400; error answers carry ok=false, an
// error_code and a description.
func TestSendMessageFollowsTheBotAPI(t *testing.T) {
	s := start(t)
	s.Block("13")
	s.NoSuchChat("14")
	emoji := strings.Repeat("😀", MaxTextUTF16/2) // 2 UTF-16 units each: exactly the limit
	cases := []struct {
		name   string
		params map[string]any
		status int
		desc   string
	}{
		{"at the limit", map[string]any{"chat_id": 12, "text": emoji}, 200, ""},
		{"one unit over", map[string]any{"chat_id": 12, "text": emoji + "a"}, 400, descTooLong},
		{"4096 runes, 8192 units", map[string]any{"chat_id": 12, "text": emoji + emoji}, 400, descTooLong},
		{"empty", map[string]any{"chat_id": 12, "text": ""}, 400, descEmpty},
		{"blank", map[string]any{"chat_id": 12, "text": " \n\t"}, 400, descEmpty},
		{"no chat", map[string]any{"text": "hi"}, 400, descNoChat},
		{"blocked", map[string]any{"chat_id": "13", "text": "hi"}, 403, descBlocked},
		{"not found", map[string]any{"chat_id": 14, "text": "hi"}, 400, descChatNotFound},
		{"channel username", map[string]any{"chat_id": "@news", "text": "hi"}, 200, ""},
	}
	for _, c := range cases {
		status, out := call(t, s, "sendMessage", c.params)
		if status != c.status {
			t.Errorf("%s: HTTP %d %v, want %d", c.name, status, out, c.status)
			continue
		}
		if c.status != 200 && (out["ok"] != false || out["error_code"] != float64(c.status) || out["description"] != c.desc) {
			t.Errorf("%s: %v", c.name, out)
		}
	}
	if n := len(s.Messages()); n != 2 {
		t.Fatalf("accepted %d messages, want 2", n)
	}
	// Methods are case-insensitive, and form-encoded parameters work as JSON ones do.
	resp, err := http.PostForm(s.URL+"/bot7:tok/SENDMESSAGE", url.Values{"chat_id": {"12"}, "text": {"form"},
		"reply_parameters": {`{"message_id":5}`}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("form call: %v %v", resp, err)
	}
	resp.Body.Close()
	if m := s.MessagesTo("12"); m[len(m)-1].Text != "form" || m[len(m)-1].ReplyTo != 5 {
		t.Fatalf("form message: %+v", m[len(m)-1])
	}
}

func TestRateLimitFailuresAndHolds(t *testing.T) {
	s := start(t)
	s.RateLimit(1, 3)
	status, out := call(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "a"})
	if status != 429 || out["parameters"].(map[string]any)["retry_after"] != 3.0 {
		t.Fatalf("429: %d %v", status, out)
	}
	s.Fail(1, 1, http.StatusBadGateway)
	for i, want := range []int{200, 502, 200} {
		if status, _ := call(t, s, "sendMessage", map[string]any{"chat_id": 2, "text": "a"}); status != want {
			t.Fatalf("call %d: %d, want %d", i, status, want)
		}
	}
	if len(s.Messages()) != 2 {
		t.Fatal("a refused call sent a message")
	}

	// A held call whose client gives up sends nothing; one released after a hold is sent.
	s.HoldAfter(1)
	call(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "first"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/bot7:tok/sendMessage", strings.NewReader(`{"chat_id":1,"text":"lost"}`))
	req.Header.Set("Content-Type", "application/json")
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a held call answered")
	}
	waitHeld(t, s, 0) // the server has noticed the client left
	done := make(chan int)
	go func() { st, _ := call(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "second"}); done <- st }()
	waitHeld(t, s, 1)
	s.Release()
	if st := <-done; st != 200 {
		t.Fatalf("released call: %d", st)
	}
	var texts []string
	for _, m := range s.Messages() {
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "a,a,first,second" {
		t.Fatalf("messages: %v", texts)
	}
}

func waitHeld(t *testing.T, s *Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.Held() != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("held calls: %d, want %d", s.Held(), n)
		}
	}
}
