// Package telegram is the dev stack's and the tests' Telegram Bot API: a real HTTP server that
// answers sendMessage and getMe for one bot token, records every message, and can be told to
// answer the next calls with 429 and a retry_after, as Telegram does under flood control.
package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Message is one sendMessage the fake accepted.
type Message struct {
	MessageID int64     `json:"message_id"`
	ChatID    string    `json:"chat_id"`
	Text      string    `json:"text"`
	ReplyTo   int64     `json:"reply_to_message_id,omitempty"`
	At        time.Time `json:"at"`
}

// Server is the running fake.
type Server struct {
	URL   string
	Token string
	srv   *http.Server

	mu          sync.Mutex
	messages    []Message
	limited     int // how many of the next sendMessage calls answer 429
	retryAfter  int
	rateLimited int // how many 429s were answered
	nextID      int64
}

// Start listens on addr ("127.0.0.1:0" in tests) and serves the bot token until Close.
func Start(addr, token string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake telegram: listen on %s: %w", addr, err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Token: token, nextID: 1000}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// RateLimit makes the next n sendMessage calls answer 429 with retry_after seconds.
func (s *Server) RateLimit(n, retryAfterSeconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited, s.retryAfter = n, retryAfterSeconds
}

// Messages returns the accepted messages, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// MessagesTo returns the accepted messages of one chat.
func (s *Server) MessagesTo(chatID string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

// RateLimited is how many calls were answered 429.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rateLimited
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, desc string, params map[string]any) {
	body := map[string]any{"ok": false, "error_code": status, "description": desc}
	if params != nil {
		body["parameters"] = params
	}
	reply(w, status, body)
}

// ServeHTTP routes /bot{token}/{method}, GET /_admin/messages and the assistant stand-in.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_admin/messages" && r.Method == http.MethodGet {
		reply(w, http.StatusOK, s.Messages())
		return
	}
	if strings.HasPrefix(r.URL.Path, AssistantPath+"/") {
		s.serveAssistant(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, found := strings.Cut(rest, "/")
	if !ok || !found {
		apiError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	if token != s.Token {
		apiError(w, http.StatusUnauthorized, "Unauthorized", nil)
		return
	}
	switch method {
	case "getMe":
		reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"id": 1, "is_bot": true, "username": "taskloom_fake_bot"}})
	case "sendMessage":
		s.sendMessage(w, r)
	default:
		apiError(w, http.StatusNotFound, "Not Found: method "+method, nil)
	}
}

type sendRequest struct {
	ChatID          json.RawMessage `json:"chat_id"`
	Text            string          `json:"text"`
	ReplyParameters *struct {
		MessageID int64 `json:"message_id"`
	} `json:"reply_parameters"`
	ReplyToMessageID int64 `json:"reply_to_message_id"`
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	var req sendRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: body is not JSON", nil)
		return
	}
	chat := strings.Trim(string(req.ChatID), `"`)
	if chat == "" || req.Text == "" {
		apiError(w, http.StatusBadRequest, "Bad Request: chat_id and text are required", nil)
		return
	}
	s.mu.Lock()
	if s.limited > 0 {
		s.limited--
		s.rateLimited++
		after := s.retryAfter
		s.mu.Unlock()
		apiError(w, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: retry after %d", after), map[string]any{"retry_after": after})
		return
	}
	s.nextID++
	m := Message{MessageID: s.nextID, ChatID: chat, Text: req.Text, ReplyTo: req.ReplyToMessageID, At: time.Now().UTC()}
	if req.ReplyParameters != nil {
		m.ReplyTo = req.ReplyParameters.MessageID
	}
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": m.MessageID,
		"chat": map[string]any{"id": chat}, "text": m.Text, "date": m.At.Unix()}})
}
