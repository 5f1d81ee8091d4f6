package feishuemu

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// handleToken issues tenant tokens. The token fields sit at the top level of the answer (no
// data wrapper), which is what the SDK's token manager decodes.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if f, ok := s.faults.take(EPToken); ok {
		s.writeFault(w, f)
		return
	}
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.AppID == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"code": 10003, "msg": "invalid param"})
		return
	}
	if len(s.opts.Apps) > 0 {
		secret, ok := s.opts.Apps[req.AppID]
		if !ok {
			writeJSON(w, http.StatusOK, map[string]any{"code": 10003, "msg": "invalid app_id"})
			return
		}
		if secret != req.AppSecret {
			writeJSON(w, http.StatusOK, map[string]any{"code": 10014, "msg": "app secret invalid"})
			return
		}
	}
	tok := newID("t-")
	s.tokMu.Lock()
	s.tokens[tok] = s.opts.Now().Add(s.opts.TokenTTL)
	s.tokMu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": int(s.opts.TokenTTL.Seconds()),
	})
}

// authed counts the call, answers an armed fault, then checks the bearer token.
func (s *Server) authed(ep string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if f, ok := s.faults.take(ep); ok {
			s.writeFault(w, f)
			return
		}
		auth := r.Header.Get("Authorization")
		tok, found := strings.CutPrefix(auth, "Bearer ")
		if !found || tok == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"code": 99991661,
				"msg": "Missing access token for authorization. Please make a request with token attached."})
			return
		}
		s.tokMu.Lock()
		exp, ok := s.tokens[tok]
		s.tokMu.Unlock()
		if !ok || s.opts.Now().After(exp) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"code": 99991663,
				"msg": "Invalid access token for authorization. Please make a request with token attached."})
			return
		}
		s.serveDelayed(ep, w, r, h)
	}
}

// serveDelayed runs h and, with Options.AnswerDelay, delivers its answer late: the delay is
// asked for (and slept) after the answer was computed.
func (s *Server) serveDelayed(ep string, w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if s.opts.AnswerDelay == nil {
		h(w, r)
		return
	}
	rec := httptest.NewRecorder()
	h(rec, r)
	time.Sleep(s.opts.AnswerDelay(ep, r.PathValue("table")))
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) writeFault(w http.ResponseWriter, f Fault) {
	status := f.HTTPStatus
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("x-ogw-ratelimit-limit", "50")
		w.Header().Set("x-ogw-ratelimit-reset", strconv.Itoa(1))
	}
	msg := faultMsgs[f.Code]
	if msg == "" {
		msg = "injected fault"
	}
	writeJSON(w, status, map[string]any{"code": f.Code, "msg": msg, "data": map[string]any{}})
}
