package entry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Update is the part of a Telegram Bot API Update the intake reads.
type Update struct {
	UpdateID      int64    `json:"update_id"`
	Message       *Message `json:"message,omitempty"`
	EditedMessage *Message `json:"edited_message,omitempty"`
}

// Message is a Telegram Message (the fields the intake reads).
type Message struct {
	MessageID      int64    `json:"message_id"`
	Date           int64    `json:"date"`
	Chat           Chat     `json:"chat"`
	From           *User    `json:"from,omitempty"`
	Text           string   `json:"text,omitempty"`
	Caption        string   `json:"caption,omitempty"`
	ReplyToMessage *Message `json:"reply_to_message,omitempty"`
}

// Chat is a Telegram Chat.
type Chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type,omitempty"`
}

// User is a Telegram User.
type User struct {
	ID       int64  `json:"id"`
	Username string `json:"username,omitempty"`
	IsBot    bool   `json:"is_bot,omitempty"`
}

// ParseUpdate decodes a webhook body. An update must have an update_id; whether it carries
// something to run is MapUpdate's question.
func ParseUpdate(body []byte) (*Update, error) {
	var u Update
	if err := json.Unmarshal(body, &u); err != nil {
		return nil, fmt.Errorf("telegram update is not valid JSON: %w", err)
	}
	if u.UpdateID <= 0 {
		return nil, fmt.Errorf("telegram update has no update_id")
	}
	return &u, nil
}

// TelegramRoute says which pipeline a chat's messages run.
type TelegramRoute func(chatID string) string

// MapUpdate builds the apply request of a Telegram update: channel telegram, core_envelope with
// the chat id and message ids, the message text (or caption), and the replied-to message as
// history. The idempotency key uses the update id, so Telegram redelivering an update (it does
// until the webhook answers 200) finds the task of the first delivery. ok is false for updates
// with nothing to run (no message, no text, a bot's own message, no pipeline for the chat).
func MapUpdate(u *Update, route TelegramRoute) (req *ApplyRequest, keyTS string, ok bool) {
	msg := u.Message
	if msg == nil {
		msg = u.EditedMessage
	}
	if msg == nil || (msg.From != nil && msg.From.IsBot) {
		return nil, "", false
	}
	text := msg.Text
	if text == "" {
		text = msg.Caption
	}
	chat := strconv.FormatInt(msg.Chat.ID, 10)
	wf := route(chat)
	if text == "" || wf == "" || msg.Chat.ID == 0 {
		return nil, "", false
	}
	history := []string{}
	if r := msg.ReplyToMessage; r != nil {
		if t := firstNonEmpty(r.Text, r.Caption); t != "" {
			history = append(history, t)
		}
	}
	user := map[string]any{}
	if msg.From != nil {
		user["telegramId"] = msg.From.ID
		if msg.From.Username != "" {
			user["username"] = msg.From.Username
		}
	}
	requestID := "tg-" + strconv.FormatInt(u.UpdateID, 10)
	req = &ApplyRequest{
		WorkflowID:    wf,
		UserText:      &text,
		HistoryChunks: &history,
		CoreEnvelope: map[string]any{
			"metadata": map[string]any{"chat_id": chat, "message_id": msg.MessageID, "update_id": u.UpdateID, "chat_type": msg.Chat.Type},
			"payload":  map[string]any{"context_quotes": history},
		},
		Telemetry: Telemetry{Channel: ChannelTelegram, RequestID: requestID},
		Metadata:  map[string]any{"chat_id": chat, "source": "telegram-bot", "message_id": msg.MessageID, "sent_at": time.Unix(msg.Date, 0).UTC().Format(time.RFC3339)},
		Source:    "telegram-bot",
		Context:   Context{User: user, RequestID: requestID},
	}
	return req, strconv.FormatInt(u.UpdateID, 10), true
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// ReplyText is what a Telegram task sends back: the final output's field (TELEGRAM_REPLY_FIELD)
// when it is text, otherwise the whole output as JSON.
func ReplyText(output map[string]any, field string) string {
	if s, ok := output[field].(string); ok && s != "" {
		return s
	}
	b, err := json.Marshal(output)
	if err != nil || len(output) == 0 {
		return "done"
	}
	return string(b)
}

// RetryAfterError is Telegram's 429: the caller must wait After before calling again.
type RetryAfterError struct {
	After       time.Duration
	Description string
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("telegram rate limit: retry after %s (%s)", e.After, e.Description)
}

// ErrRejected marks a request Telegram refuses for good (bad chat id, bot blocked): retrying it
// cannot help.
var ErrRejected = errors.New("telegram rejected the request")
