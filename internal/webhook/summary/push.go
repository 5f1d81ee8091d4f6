// Package summary posts webhook result payloads to the summary receiver (SUMMARY_WEBHOOK_URL):
// plain JSON, or a signed Feishu custom-bot message when a secret is set.
package summary

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/webhook"
)

// Pusher posts payloads to a summary receiver. With a Secret it speaks the Feishu custom-bot
// protocol instead: a text message carrying the payload, signed with timestamp+sign.
type Pusher struct {
	Secret string
	Client *http.Client
	Now    func() time.Time
}

// BotSign is the Feishu custom-bot signature: base64(HMAC-SHA256(key=timestamp+"\n"+secret,
// message=empty)). It is not DingTalk's scheme (key=secret, message=string).
func BotSign(timestamp int64, secret string) string {
	mac := hmac.New(sha256.New, []byte(strconv.FormatInt(timestamp, 10)+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// maxBotText keeps a bot message under Feishu's ~20 KB body limit.
const maxBotText = 18000

// Push delivers p to url (the target's SUMMARY_WEBHOOK_URL); any non-2xx answer (or a bot
// answer with a non-zero code) is an error that says what the receiver returned.
func (ps *Pusher) Push(ctx context.Context, url string, p *webhook.Payload) error {
	if url == "" {
		return fmt.Errorf("SUMMARY_WEBHOOK_URL is not set")
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode payload: %w", err)
	}
	body := payload
	if ps.Secret != "" {
		body, err = ps.botBody(p, payload)
		if err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build push request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	cl := ps.Client
	if cl == nil {
		cl = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("push to summary webhook: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("summary webhook answered HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(answer))
	}
	if ps.Secret != "" {
		var bot struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		if json.Unmarshal(answer, &bot) == nil && bot.Code != 0 {
			return fmt.Errorf("feishu bot answered code=%d msg=%s", bot.Code, bot.Msg)
		}
	}
	return nil
}

func (ps *Pusher) botBody(p *webhook.Payload, payload []byte) ([]byte, error) {
	now := time.Now
	if ps.Now != nil {
		now = ps.Now
	}
	ts := now().Unix()
	text := fmt.Sprintf("[%s] group=%s tasks=%s records=%d\n%s", p.BizType, p.GroupID, webhook.FormatTaskIDs(p.TaskIDs), len(p.Records), payload)
	if len(text) > maxBotText {
		text = strings.ToValidUTF8(text[:maxBotText], "") + "…"
	}
	b, err := json.Marshal(map[string]any{
		"timestamp": strconv.FormatInt(ts, 10),
		"sign":      BotSign(ts, ps.Secret),
		"msg_type":  "text",
		"content":   map[string]string{"text": text},
	})
	if err != nil {
		return nil, fmt.Errorf("encode bot message: %w", err)
	}
	return b, nil
}
