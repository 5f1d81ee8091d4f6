// Package telegrambot is the Telegram Bot API client of the entry subsystem: sendMessage, with
// Telegram's answers mapped to the domain's retry-after and rejection errors.
package telegrambot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
)

// Bot is a minimal Telegram Bot API client: sendMessage is all the entry subsystem needs.
type Bot struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns a client for the Bot API at baseURL (https://api.telegram.org or a fake).
func New(baseURL, token string) *Bot {
	return &Bot{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 15 * time.Second}}
}

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// SendMessage sends text to chatID as plain text (no parse_mode), as a reply to replyTo when it
// is not zero, and returns the new message's id. The text must fit one message
// (entry.MaxMessageUTF16; entry.ReplyParts splits a longer one): Telegram refuses a longer one.
// A 429 is a *RetryAfterError carrying Telegram's retry_after; other 4xx (400 chat not found or
// message too long, 403 bot blocked by the user) wrap ErrRejected; 5xx and transport errors are
// returned as they are (retryable).
func (b *Bot) SendMessage(ctx context.Context, chatID, text string, replyTo int64) (int64, error) {
	body := map[string]any{"chat_id": chatID, "text": text}
	if replyTo != 0 {
		body["reply_parameters"] = map[string]any{"message_id": replyTo, "allow_sending_without_reply": true}
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("encode sendMessage: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.BaseURL+"/bot"+b.Token+"/sendMessage", bytes.NewReader(buf))
	if err != nil {
		return 0, fmt.Errorf("sendMessage request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.HTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("sendMessage to chat %s: %w", chatID, redact(err, b.Token))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var ar apiResponse
	if err := json.Unmarshal(raw, &ar); err != nil {
		return 0, fmt.Errorf("sendMessage to chat %s: HTTP %d with a body that is not Bot API JSON", chatID, resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || ar.ErrorCode == http.StatusTooManyRequests:
		after := time.Duration(ar.Parameters.RetryAfter) * time.Second
		if after <= 0 {
			after = time.Second
		}
		return 0, &entry.RetryAfterError{After: after, Description: ar.Description}
	case resp.StatusCode >= 500:
		return 0, fmt.Errorf("sendMessage to chat %s: HTTP %d: %s", chatID, resp.StatusCode, ar.Description)
	case !ar.OK || resp.StatusCode >= 400:
		return 0, fmt.Errorf("sendMessage to chat %s: HTTP %d: %s: %w", chatID, resp.StatusCode, ar.Description, entry.ErrRejected)
	}
	var msg struct {
		MessageID int64 `json:"message_id"`
	}
	if err := json.Unmarshal(ar.Result, &msg); err != nil || msg.MessageID == 0 {
		return 0, fmt.Errorf("sendMessage to chat %s: result has no message_id", chatID)
	}
	return msg.MessageID, nil
}

// redact keeps the bot token (part of every Bot API URL) out of error messages and logs.
func redact(err error, token string) error {
	if token == "" {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "<token>"))
}
