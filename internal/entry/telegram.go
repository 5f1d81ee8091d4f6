package entry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// TelegramIntake says which updates become tasks.
type TelegramIntake struct {
	Route TelegramRoute
	// RerunEdits runs an edited_message as a new task (ENTRY_TELEGRAM_EDITS=rerun). Telegram
	// sends an edit as an update of its own, with a new update_id, so it would otherwise be a
	// second task for the same message: by default an edit is acknowledged and nothing runs.
	RerunEdits bool
}

// Reasons MapUpdate gives for an update that runs nothing.
const (
	IgnoredNoMessage = "no message"
	IgnoredEdit      = "edited_message: edits do not run again (ENTRY_TELEGRAM_EDITS=ignore)"
	IgnoredFromBot   = "message from a bot"
	IgnoredNoText    = "message without text or caption"
	IgnoredNoRoute   = "no pipeline for the chat"
)

// MapUpdate builds the apply request of a Telegram update: channel telegram, core_envelope with
// the chat id and message ids, the message text (or caption), and the replied-to message as
// history. The idempotency key uses the update id, so Telegram redelivering an update (it does
// until the webhook answers 200) finds the task of the first delivery. An update with nothing to
// run (no message, an edit unless in.RerunEdits, a bot's own message, no text, no pipeline for
// the chat) maps to no request and the reason.
func MapUpdate(u *Update, in TelegramIntake) (req *ApplyRequest, keyTS, ignored string) {
	msg, ignored := u.runnable(in.RerunEdits)
	if msg == nil {
		return nil, "", ignored
	}
	text := firstNonEmpty(msg.Text, msg.Caption)
	chat := strconv.FormatInt(msg.Chat.ID, 10)
	if text == "" || msg.Chat.ID == 0 {
		return nil, "", IgnoredNoText
	}
	wf := in.Route(chat)
	if wf == "" {
		return nil, "", IgnoredNoRoute
	}
	return applyRequest(u.UpdateID, msg, wf, text), strconv.FormatInt(u.UpdateID, 10), ""
}

// runnable is the update's message when it may become a task, else the reason it may not.
func (u *Update) runnable(rerunEdits bool) (*Message, string) {
	msg := u.Message
	if msg == nil && u.EditedMessage != nil {
		if !rerunEdits {
			return nil, IgnoredEdit
		}
		msg = u.EditedMessage
	}
	switch {
	case msg == nil:
		return nil, IgnoredNoMessage
	case msg.From != nil && msg.From.IsBot:
		return nil, IgnoredFromBot
	}
	return msg, ""
}

func applyRequest(updateID int64, msg *Message, wf, text string) *ApplyRequest {
	chat := strconv.FormatInt(msg.Chat.ID, 10)
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
	requestID := "tg-" + strconv.FormatInt(updateID, 10)
	return &ApplyRequest{
		WorkflowID:    wf,
		UserText:      &text,
		HistoryChunks: &history,
		CoreEnvelope: map[string]any{
			"metadata": map[string]any{"chat_id": chat, "message_id": msg.MessageID, "update_id": updateID, "chat_type": msg.Chat.Type},
			"payload":  map[string]any{"context_quotes": history},
		},
		Telemetry: Telemetry{Channel: ChannelTelegram, RequestID: requestID},
		Metadata:  map[string]any{"chat_id": chat, "source": "telegram-bot", "message_id": msg.MessageID, "sent_at": time.Unix(msg.Date, 0).UTC().Format(time.RFC3339)},
		Source:    "telegram-bot",
		Context:   Context{User: user, RequestID: requestID},
	}
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
// when it is text that is not blank, otherwise the whole output as JSON. It is never blank.
func ReplyText(output map[string]any, field string) string {
	if s, ok := output[field].(string); ok && strings.TrimSpace(s) != "" {
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

// Is makes a RetryAfterError an ErrRateLimited refusal.
func (e *RetryAfterError) Is(target error) bool { return target == ErrRateLimited }

// ErrRejected marks a request Telegram refuses for good (bad chat id, bot blocked): retrying it
// cannot help.
var ErrRejected = errors.New("telegram rejected the request")
