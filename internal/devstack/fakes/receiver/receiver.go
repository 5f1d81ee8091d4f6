// Package receiver is an HTTP endpoint that records every request body posted to it — the dev
// stack's stand-in for a webhook receiver such as SUMMARY_WEBHOOK_URL. GET /_received lists
// what arrived, newest last.
package receiver

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxKept bounds memory: older deliveries are dropped first.
const maxKept = 1000

// Delivery is one recorded request.
type Delivery struct {
	Path string          `json:"path"`
	At   time.Time       `json:"at"`
	Body json.RawMessage `json:"body"`
}

// Server records deliveries.
type Server struct {
	mu   sync.Mutex
	got  []Delivery
	srv  *http.Server
	addr string
}

// Start serves on addr until Close.
func Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("receiver: listen %s: %w", addr, err)
	}
	s := &Server{addr: ln.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the receiver's base URL.
func (s *Server) URL() string { return "http://" + s.addr }

// Close stops the listener.
func (s *Server) Close() error { return s.srv.Close() }

// Received returns a copy of what arrived.
func (s *Server) Received() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.got...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/_received" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Received())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil || !json.Valid(body) {
		http.Error(w, `{"error":"body must be JSON"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.got = append(s.got, Delivery{Path: r.URL.Path, At: time.Now().UTC(), Body: body})
	if len(s.got) > maxKept {
		s.got = s.got[len(s.got)-maxKept:]
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}`))
}
