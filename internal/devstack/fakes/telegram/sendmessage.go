package telegram

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// MaxTextUTF16 is sendMessage's limit on text: "1-4096 characters after entities parsing"
// (https://core.telegram.org/bots/api#sendmessage), where the Bot API measures text in UTF-16
// code units, as MessageEntity's offset and length say (https://core.telegram.org/bots/api#messageentity).
// The fake parses no entities: it counts the text it is given.
const MaxTextUTF16 = 4096

// The descriptions Telegram answers these refusals with.
const (
	descTooLong      = "Bad Request: message is too long"
	descEmpty        = "Bad Request: message text is empty"
	descNoChat       = "Bad Request: chat_id is empty"
	descChatNotFound = "Bad Request: chat not found"
	descBlocked      = "Forbidden: bot was blocked by the user"
)

type sendRequest struct {
	ChatID          string
	Text            string
	ReplyTo         int64
	ReplyParameters *struct {
		MessageID int64 `json:"message_id"`
	}
}

// sendMessage is https://core.telegram.org/bots/api#sendmessage: refusals first (a bad request,
// a chat that cannot be written to), then the faults a test asked for, then the message is
// accepted and recorded.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	req, err := decodeSend(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), nil)
		return
	}
	if status, desc := s.refuse(req); status != 0 {
		apiError(w, status, desc, nil)
		return
	}
	if s.fault(w) || !s.wait(r) {
		return
	}
	m := s.accept(req)
	reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": m.MessageID,
		"chat": map[string]any{"id": m.ChatID}, "text": m.Text, "date": m.At.Unix()}})
}

// decodeSend reads the parameters the way the Bot API takes them ("Making requests"): a JSON
// body, or URL query / application/x-www-form-urlencoded / multipart/form-data fields.
func decodeSend(r *http.Request) (*sendRequest, error) {
	var req sendRequest
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var body struct {
			ChatID           json.RawMessage `json:"chat_id"`
			Text             string          `json:"text"`
			ReplyToMessageID int64           `json:"reply_to_message_id"`
			ReplyParameters  json.RawMessage `json:"reply_parameters"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return nil, fmt.Errorf("body is not JSON")
		}
		// Read to the end: only then does the server notice a client that hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		req.ChatID, req.Text, req.ReplyTo = strings.Trim(string(body.ChatID), `"`), body.Text, body.ReplyToMessageID
		return &req, replyParameters(&req, body.ReplyParameters)
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil && err != http.ErrNotMultipart {
		return nil, fmt.Errorf("form is not readable")
	}
	req.ChatID, req.Text = r.FormValue("chat_id"), r.FormValue("text")
	req.ReplyTo, _ = strconv.ParseInt(r.FormValue("reply_to_message_id"), 10, 64)
	return &req, replyParameters(&req, []byte(r.FormValue("reply_parameters")))
}

// replyParameters decodes the JSON-serialized ReplyParameters object, when there is one.
func replyParameters(req *sendRequest, raw []byte) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, &req.ReplyParameters); err != nil {
		return fmt.Errorf("can't parse reply parameters JSON object")
	}
	return nil
}

// refuse returns the answer Telegram gives a request it will never carry out: text missing,
// blank (Telegram strips surrounding whitespace and refuses what is left empty) or over
// MaxTextUTF16, a chat id that names no chat, a chat that blocked the bot. 0 accepts.
func (s *Server) refuse(req *sendRequest) (int, string) {
	switch {
	case req.ChatID == "":
		return http.StatusBadRequest, descNoChat
	case strings.TrimSpace(req.Text) == "":
		return http.StatusBadRequest, descEmpty
	case utf16Len(req.Text) > MaxTextUTF16:
		return http.StatusBadRequest, descTooLong
	case !validChatID(req.ChatID):
		return http.StatusBadRequest, descChatNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.refused[req.ChatID] {
	case refusedBlocked:
		return http.StatusForbidden, descBlocked
	case refusedNotFound:
		return http.StatusBadRequest, descChatNotFound
	}
	return 0, ""
}

// validChatID: a chat_id is an integer or a channel's @username.
func validChatID(id string) bool {
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		return true
	}
	return strings.HasPrefix(id, "@") && len(id) > 1
}

// utf16Len is the length of s in UTF-16 code units. A byte that is not UTF-8 counts as the one
// replacement character it decodes to.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func (s *Server) accept(req *sendRequest) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	m := Message{MessageID: s.nextID, ChatID: req.ChatID, Text: req.Text, ReplyTo: req.ReplyTo, At: time.Now().UTC()}
	if req.ReplyParameters != nil {
		m.ReplyTo = req.ReplyParameters.MessageID
	}
	s.messages = append(s.messages, m)
	return m
}
