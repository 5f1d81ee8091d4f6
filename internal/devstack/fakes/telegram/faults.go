package telegram

import (
	"fmt"
	"net/http"
)

type refusal int

const (
	refusedNone refusal = iota
	refusedBlocked
	refusedNotFound
)

// Block makes the chat one whose user blocked the bot: every sendMessage to it is 403
// "Forbidden: bot was blocked by the user".
func (s *Server) Block(chatID string) { s.setRefusal(chatID, refusedBlocked) }

// NoSuchChat makes the chat id one Telegram does not know (or the bot may not see): every
// sendMessage to it is 400 "Bad Request: chat not found".
func (s *Server) NoSuchChat(chatID string) { s.setRefusal(chatID, refusedNotFound) }

func (s *Server) setRefusal(chatID string, r refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[chatID] = r
}

// RateLimit makes the next n sendMessage calls answer 429 with retry_after seconds, as flood
// control does (ResponseParameters.retry_after).
func (s *Server) RateLimit(n, retryAfterSeconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited, s.retryAfter = n, retryAfterSeconds
}

// Fail lets the next `after` sendMessage calls through, then makes n calls answer status (e.g.
// 502) without sending anything.
func (s *Server) Fail(after, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter, s.failing, s.failStatus = after, n, status
}

// fault answers the call with the next rate limit or failure a test asked for, if any.
func (s *Server) fault(w http.ResponseWriter) bool {
	s.mu.Lock()
	switch {
	case s.limited > 0:
		s.limited--
		s.rateLimited++
		after := s.retryAfter
		s.mu.Unlock()
		apiError(w, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: retry after %d", after), map[string]any{"retry_after": after})
		return true
	case s.failing > 0 && s.failAfter > 0:
		s.failAfter--
	case s.failing > 0:
		s.failing--
		status := s.failStatus
		s.mu.Unlock()
		apiError(w, status, http.StatusText(status), nil)
		return true
	}
	s.mu.Unlock()
	return false
}

// HoldAfter lets the next n sendMessage calls through and makes every later one wait, before
// anything is sent, until Release. A held call whose client hangs up (a worker that died) sends
// nothing.
func (s *Server) HoldAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdAfter = n
}

// Held is the number of sendMessage calls waiting for Release.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Release lets the held calls (and every later one) through.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdAfter = -1
	close(s.gate)
	s.gate = make(chan struct{})
}

// wait holds the call when HoldAfter says so; false when the client hung up meanwhile.
func (s *Server) wait(r *http.Request) bool {
	s.mu.Lock()
	if s.holdAfter != 0 {
		if s.holdAfter > 0 {
			s.holdAfter--
		}
		s.mu.Unlock()
		return true
	}
	s.held++
	gate := s.gate
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.held--
		s.mu.Unlock()
	}()
	select {
	case <-gate:
		return true
	case <-r.Context().Done():
		return false
	}
}
