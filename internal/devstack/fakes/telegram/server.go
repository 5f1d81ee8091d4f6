// Package telegram is the dev stack's and the tests' Telegram Bot API: a real HTTP server that
// answers sendMessage and getMe for one bot token, records every message it accepts, and answers
// as the Bot API documentation says Telegram does (https://core.telegram.org/bots/api): text
// over 4096 UTF-16 code units is refused, a chat that blocked the bot is 403, flood control is
// 429 with retry_after. Tests can also make it fail or hold calls, to play a network or a
// worker dying in the middle of a reply.
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
	failAfter   int // sendMessage calls let through before the failing ones
	failing     int // how many sendMessage calls answer failStatus
	failStatus  int
	refused     map[string]refusal // chat id → how Telegram refuses messages to it
	holdAfter   int                // sendMessage calls still let through before calls are held; -1: none held
	gate        chan struct{}      // closed by Release
	held        int
	nextID      int64
}

// Start listens on addr ("127.0.0.1:0" in tests) and serves the bot token until Close.
func Start(addr, token string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake telegram: listen on %s: %w", addr, err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Token: token, nextID: 1000, refused: map[string]refusal{},
		holdAfter: -1, gate: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	s.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
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

// apiError answers as the Bot API's "Making requests" section describes an unsuccessful
// request: ok false, a human-readable description, an integer error_code and, for some errors,
// parameters (ResponseParameters, e.g. retry_after).
func apiError(w http.ResponseWriter, status int, desc string, params map[string]any) {
	body := map[string]any{"ok": false, "error_code": status, "description": desc}
	if params != nil {
		body["parameters"] = params
	}
	reply(w, status, body)
}

// ServeHTTP routes /bot{token}/{method}, GET /_admin/messages and the assistant stand-in. Bot
// API method names are case-insensitive.
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
	switch strings.ToLower(method) {
	case "getme":
		reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"id": 1, "is_bot": true, "username": "taskloom_fake_bot"}})
	case "sendmessage":
		s.sendMessage(w, r)
	default:
		apiError(w, http.StatusNotFound, "Not Found: method "+method, nil)
	}
}
